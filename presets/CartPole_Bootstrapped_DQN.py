"""Bootstrapped DQN on CartPole-v1 (Osband et al., 2016): 10 heads, each learning from a
random half of the transitions; each episode follows one head."""

from coach import (
    BasicRLGraphManager,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    MiddlewareParameters,
    NetworkParameters,
    PresetValidation,
    ScheduleParameters,
)
from coach.agents.bootstrapped_dqn import BootstrappedDQNAgentParameters
from coach.networks import BootstrappedQHeadParameters

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(1000),
    improve_steps=EnvironmentSteps(99_000),
    steps_between_evaluation_periods=EnvironmentSteps(2500),
    evaluation_steps=EnvironmentEpisodes(10),
)

agent = BootstrappedDQNAgentParameters()
agent.algorithm.batch_size = 64
agent.algorithm.num_consecutive_playing_steps = EnvironmentSteps(256)
agent.algorithm.num_consecutive_training_steps = 128
agent.algorithm.num_steps_between_copying_online_weights_to_target = EnvironmentSteps(256)
agent.algorithm.bootstrap_probability = 0.5
agent.memory.max_size = 100_000
agent.network_wrappers["main"] = NetworkParameters(
    middleware=MiddlewareParameters(scheme=[256, 256]),
    heads=[BootstrappedQHeadParameters(num_heads=10)],
    learning_rate=2.3e-3,
    gradient_clip_norm=10.0,
    create_target_network=True,
)

environment = GymEnvironmentParameters(level="CartPole-v1")

graph_manager = BasicRLGraphManager(agent, environment, schedule)

validation = PresetValidation(min_reward=475, max_env_steps=100_000, seeds=(0,))
