"""SAC on the MuJoCo tasks (Haarnoja et al., 2018): HalfCheetah-v5 by default, any other by
``-lvl`` (``coach -p Mujoco_SAC -lvl hopper``). The paper's settings, as SB3 and RL Zoo keep
them: Adam at 3e-4, batches of 256, 256x256 networks, soft updates of 0.005, the
temperature tuned to an entropy of -dim(A), 10,000 random steps first."""

from coach import BasicRLGraphManager, PresetValidation
from coach.agents.sac import SACAgentParameters
from coach_presets import _mujoco

agent = SACAgentParameters()
_mujoco.act_in_unit_box(agent)

graph_manager = BasicRLGraphManager(agent, _mujoco.environment(), _mujoco.schedule())

validation = PresetValidation(min_reward=3000, max_env_steps=100_000)
