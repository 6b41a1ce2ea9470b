"""TD3 on BipedalWalker-v3 (Fujimoto et al., 2018), after RL Zoo: discount 0.98, Gaussian
exploration noise of 0.1 (in the [-1, 1] action box), Adam at 1e-3, batches of 256, 400x300
networks, a replay of 200,000, 10,000 random steps first; evaluated every 20,000 steps over
5 episodes. Any other Box2D task by ``-lvl``."""

from coach import (
    BasicRLGraphManager,
    ConstantSchedule,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    OutputFilter,
    PresetValidation,
    ScheduleParameters,
)
from coach.agents.td3 import TD3AgentParameters
from coach.exploration.additive_noise import AdditiveNoiseParameters
from coach.filters.action import LinearBoxToBoxMap

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(10_000),
    improve_steps=EnvironmentSteps(990_000),
    steps_between_evaluation_periods=EnvironmentSteps(20_000),
    evaluation_steps=EnvironmentEpisodes(5),
)

agent = TD3AgentParameters()
agent.algorithm.discount = 0.98
agent.memory.max_size = 200_000
agent.exploration = AdditiveNoiseParameters(
    noise_schedule=ConstantSchedule(0.1), noise_as_percentage_from_action_space=False
)
agent.output_filter = OutputFilter(action_filters=[LinearBoxToBoxMap(-1.0, 1.0)])

environment = GymEnvironmentParameters(level="BipedalWalker-v3", level_set="box2d")

graph_manager = BasicRLGraphManager(agent, environment, schedule)

validation = PresetValidation(min_reward=250, max_env_steps=1_000_000)
