"""NAF on the MuJoCo tasks (Gu et al., 2016): InvertedPendulum-v5 by default, any other by
``-lvl``. One network of 200x200 units answers mu, V and L; RL Zoo's off-policy rhythm: a
gradient step on a batch of 256 after every env step, Adam at 1e-3, the target 0.005 of the
way after every env step; Ornstein-Uhlenbeck noise; 1,000 random steps first. Reaches 1,000
on InvertedPendulum-v5 within 30,000 env steps on seeds 0, 1, 2.

(Pendulum_NAF's rhythm, the original Coach's, of 5 steps on batches of 32 and the target
0.001 of the way, stayed at 40 to 120 through 25,000 steps on two of three seeds here at
Adam 1e-3, and on all three at 1e-4; the original Coach marked its Mujoco_NAF broken.)"""

from coach import (
    BasicRLGraphManager,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    PresetValidation,
    ScheduleParameters,
)
from coach.agents.naf import NAFAgentParameters
from coach_presets import _mujoco

agent = NAFAgentParameters()
agent.algorithm.num_consecutive_training_steps = 1
agent.algorithm.batch_size = 256
agent.algorithm.target_update_rate = 0.005
_mujoco.act_in_unit_box(agent)

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(1000),
    improve_steps=EnvironmentSteps(199_000),
    steps_between_evaluation_periods=EnvironmentSteps(5000),
    evaluation_steps=EnvironmentEpisodes(5),
)
environment = GymEnvironmentParameters(level="InvertedPendulum-v5", level_set="mujoco")
graph_manager = BasicRLGraphManager(agent, environment, schedule)

validation = PresetValidation(min_reward=1000, max_env_steps=30_000, seeds=(0, 1, 2))
