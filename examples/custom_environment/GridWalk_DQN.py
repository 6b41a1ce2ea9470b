"""DQN on a custom environment, GridWalkEnv in grid_walk.py next to this file.

    coach -p examples/custom_environment/GridWalk_DQN.py

``level="grid_walk:GridWalkEnv"`` names the class as ``module:Class``; modules next to a
preset file import as they would next to a script. (An environment registered with
``gymnasium.register`` can be named by its id instead.)
"""

from coach import (
    BasicRLGraphManager,
    DQNAgentParameters,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    LinearSchedule,
    PresetValidation,
    ScheduleParameters,
)

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(500),
    improve_steps=EnvironmentSteps(10_000),
    steps_between_evaluation_periods=EnvironmentSteps(1000),
    evaluation_steps=EnvironmentEpisodes(5),
)

agent = DQNAgentParameters()
agent.exploration.epsilon_schedule = LinearSchedule(1.0, 0.05, 3000)

environment = GymEnvironmentParameters(
    level="grid_walk:GridWalkEnv", kwargs={"size": 5}, max_episode_steps=50
)

graph_manager = BasicRLGraphManager(agent, environment, schedule)

# The shortest walk takes 8 steps: 1 - 7 * 0.01.
validation = PresetValidation(min_reward=0.93, max_env_steps=10_000)
