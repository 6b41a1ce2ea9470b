"""NAF on the MuJoCo tasks (Gu et al., 2016): InvertedPendulum-v5 by default, any other by
``-lvl``. The settings of Pendulum_NAF (the original Coach's, Adam at 1e-4): a 200x200
network for mu, V and L, 5 gradient steps on batches of 32 after every env step, the target
0.001 of the way after every env step, Ornstein-Uhlenbeck noise; 1,000 random steps first.
Reaches 1,000 on InvertedPendulum-v5 within 30,000 env steps on seed 0."""

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
agent.network_wrappers["main"].learning_rate = 1e-4
_mujoco.act_in_unit_box(agent)

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(1000),
    improve_steps=EnvironmentSteps(199_000),
    steps_between_evaluation_periods=EnvironmentSteps(5000),
    evaluation_steps=EnvironmentEpisodes(5),
)
environment = GymEnvironmentParameters(level="InvertedPendulum-v5", level_set="mujoco")
graph_manager = BasicRLGraphManager(agent, environment, schedule)

validation = PresetValidation(min_reward=1000, max_env_steps=30_000)
