"""ACER on CartPole-v1 (Wang et al., 2017), after the original Coach's CartPole_ACER: one env
copy, blocks of 5 steps, 4 off-policy updates per block on average (Poisson) on batches of
16 replayed segments once the replay holds 1,000 steps, rewards divided by 200, the trust
region around the average network, one layer of 256, Adam at 1e-3, entropy bonus 0.01.

Retrace bootstraps from the average network's Q-values (``bootstrap_from_average``): with
the network's own, as in the paper, the Q-values diverged on every seed tried once episodes
reached 500 steps (V, at most 0.5 with these rewards, rose past 20 within a few hundred
updates, and the policy collapsed to ~10 steps); with the average's they stay below 0.5.
Reaches 150 within 300 episodes on seeds 0, 1, 2, the original Coach's promise.
"""

from coach import (
    BasicRLGraphManager,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    PresetValidation,
    ScheduleParameters,
)
from coach.agents.acer import ACERAgentParameters, acer_network
from coach.filters.reward.rescale import RewardRescaleFilter

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(0),
    improve_steps=EnvironmentEpisodes(300),
    steps_between_evaluation_periods=EnvironmentEpisodes(10),
    evaluation_steps=EnvironmentEpisodes(5),
)

agent = ACERAgentParameters()
agent.algorithm.discount = 0.99
agent.algorithm.ratio_of_replay = 4
agent.algorithm.num_transitions_to_start_replay = 1000
agent.algorithm.batch_size = 16
agent.algorithm.beta_entropy = 0.01
agent.algorithm.bootstrap_from_average = True
agent.memory.segment_length = 5
agent.memory.max_size = 50_000
agent.input_filter.reward_filters = [RewardRescaleFilter(1 / 200)]
agent.network_wrappers["main"] = acer_network([256], learning_rate=1e-3)

graph_manager = BasicRLGraphManager(agent, GymEnvironmentParameters(level="CartPole-v1"), schedule)

validation = PresetValidation(min_reward=150, max_episodes=300, seeds=(0, 1, 2))
