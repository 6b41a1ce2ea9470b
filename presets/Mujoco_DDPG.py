"""DDPG on the MuJoCo tasks (Lillicrap et al., 2016): HalfCheetah-v5 by default, any other by
``-lvl``. RL Zoo's settings: Gaussian exploration noise of 0.1 (in the [-1, 1] action box),
Adam at 1e-3, batches of 256, 400x300 networks, 10,000 random steps first."""

from coach import BasicRLGraphManager, ConstantSchedule, PresetValidation
from coach.agents.ddpg import DDPGAgentParameters
from coach.exploration.additive_noise import AdditiveNoiseParameters
from coach_presets import _mujoco

agent = DDPGAgentParameters()
agent.exploration = AdditiveNoiseParameters(
    noise_schedule=ConstantSchedule(0.1), noise_as_percentage_from_action_space=False
)
_mujoco.act_in_unit_box(agent)

graph_manager = BasicRLGraphManager(agent, _mujoco.environment(), _mujoco.schedule())

validation = PresetValidation(min_reward=2000, max_env_steps=200_000)
