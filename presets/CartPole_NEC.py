"""Neural Episodic Control on CartPole-v1 (Pritzel et al., 2017), after the original Coach's
CartPole_NEC: rewards divided by 200, 100-step returns, 50 neighbours per lookup in a
dictionary per action, keys of 64 numbers from two layers of 64; a batch of 32 every 4 env
steps, Adam at 2.5e-4, epsilon from 0.5 to 0.1 over 1,000 steps after 1,300 random ones.
Reaches 150 within 300 episodes on seeds 0, 1, 2, the original Coach's promise.
"""

from coach import (
    BasicRLGraphManager,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    LinearSchedule,
    NECAgentParameters,
    PresetValidation,
    ScheduleParameters,
)
from coach.filters.reward.rescale import RewardRescaleFilter

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(1300),
    improve_steps=EnvironmentSteps(60_000),
    steps_between_evaluation_periods=EnvironmentSteps(1000),
    evaluation_steps=EnvironmentEpisodes(5),
)

agent = NECAgentParameters()
agent.algorithm.discount = 0.99
agent.exploration.epsilon_schedule = LinearSchedule(0.5, 0.1, 1000)
agent.exploration.evaluation_epsilon = 0.0
agent.memory.max_size = 100_000
agent.input_filter.reward_filters = [RewardRescaleFilter(1 / 200)]
agent.network_wrappers["main"].learning_rate = 2.5e-4

graph_manager = BasicRLGraphManager(agent, GymEnvironmentParameters(level="CartPole-v1"), schedule)

validation = PresetValidation(min_reward=150, max_episodes=300, seeds=(0, 1, 2))
