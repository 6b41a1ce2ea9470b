"""SAC on the DeepMind Control Suite (Haarnoja et al., 2018): cheetah_run by default, any
task by ``-lvl``. The paper's settings, as Mujoco_SAC: Adam at 3e-4, batches of 256,
256x256 networks, soft updates of 0.005, the temperature tuned to an entropy of -dim(A);
10,000 random steps first. Reaches 400 on cheetah_run within 300,000 env steps on seeds 0,
1, 2."""

from coach import BasicRLGraphManager, PresetValidation
from coach.agents.sac import SACAgentParameters
from coach_presets import _control_suite

BUDGET = 300_000

agent = SACAgentParameters()

graph_manager = BasicRLGraphManager(
    agent, _control_suite.environment("cheetah_run"), _control_suite.schedule(BUDGET)
)

validation = PresetValidation(min_reward=400, max_env_steps=BUDGET, seeds=(0, 1, 2))
