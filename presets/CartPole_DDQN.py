"""Double DQN on CartPole-v1 (van Hasselt et al., 2016), with CartPole_DQN's training rhythm."""

from coach import (
    BasicRLGraphManager,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    LinearSchedule,
    MiddlewareParameters,
    NetworkParameters,
    PresetValidation,
    ScheduleParameters,
)
from coach.agents.ddqn import DDQNAgentParameters
from coach.networks import QHeadParameters

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(1000),
    improve_steps=EnvironmentSteps(99_000),
    steps_between_evaluation_periods=EnvironmentSteps(2500),
    evaluation_steps=EnvironmentEpisodes(10),
)

agent = DDQNAgentParameters()
agent.algorithm.batch_size = 64
agent.algorithm.num_consecutive_playing_steps = EnvironmentSteps(256)
agent.algorithm.num_consecutive_training_steps = 128
agent.algorithm.num_steps_between_copying_online_weights_to_target = EnvironmentSteps(256)
agent.exploration.epsilon_schedule = LinearSchedule(1.0, 0.04, 8000)
agent.memory.max_size = 100_000
agent.network_wrappers["main"] = NetworkParameters(
    middleware=MiddlewareParameters(scheme=[256, 256]),
    heads=[QHeadParameters()],
    learning_rate=2.3e-3,
    gradient_clip_norm=10.0,
    create_target_network=True,
)

environment = GymEnvironmentParameters(level="CartPole-v1")

graph_manager = BasicRLGraphManager(agent, environment, schedule)

validation = PresetValidation(min_reward=475, max_env_steps=100_000, seeds=(0, 1, 2))
