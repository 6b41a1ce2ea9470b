"""DDPG on the DeepMind Control Suite (Lillicrap et al., 2016, whose tasks these were):
cartpole_swingup by default, any task by ``-lvl`` (``coach -p ControlSuite_DDPG -lvl
walker_walk``). RL Zoo's DDPG settings, as Mujoco_DDPG: Gaussian exploration noise of 0.1,
Adam at 1e-3, batches of 256, 400x300 networks; 10,000 random steps first. Reaches 600 on
cartpole_swingup within 200,000 env steps on seeds 0, 1, 2."""

from coach import BasicRLGraphManager, ConstantSchedule, PresetValidation
from coach.agents.ddpg import DDPGAgentParameters
from coach.exploration.additive_noise import AdditiveNoiseParameters
from coach_presets import _control_suite

BUDGET = 200_000

agent = DDPGAgentParameters()
agent.exploration = AdditiveNoiseParameters(
    noise_schedule=ConstantSchedule(0.1), noise_as_percentage_from_action_space=False
)

graph_manager = BasicRLGraphManager(
    agent, _control_suite.environment("cartpole_swingup"), _control_suite.schedule(BUDGET)
)

validation = PresetValidation(min_reward=600, max_env_steps=BUDGET, seeds=(0, 1, 2))
