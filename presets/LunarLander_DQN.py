"""DQN on LunarLander-v3, after RL Zoo's tuned DQN settings: a gradient step every env step
(in rounds of 4), a target refresh every 250 steps, epsilon down to 0.1 over 36,000 steps.
The learning rate runs down to 0 over the 299,000 training steps (`learning_rate_decay`): at
RL Zoo's constant 6.3e-4, seed 1's final agent had fallen to -33.9 on 20 episodes after its
best.pt held 245.7."""

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
    improve_steps=EnvironmentSteps(299_000),
    steps_between_evaluation_periods=EnvironmentSteps(10_000),
    evaluation_steps=EnvironmentEpisodes(10),
)

agent = DQNAgentParameters()
agent.algorithm.discount = 0.99
agent.algorithm.batch_size = 128
agent.algorithm.num_consecutive_playing_steps = EnvironmentSteps(4)
agent.algorithm.num_consecutive_training_steps = 4
agent.algorithm.num_steps_between_copying_online_weights_to_target = EnvironmentSteps(250)
agent.exploration.epsilon_schedule = LinearSchedule(1.0, 0.1, 36_000)
agent.memory.max_size = 50_000
agent.network_wrappers["main"] = NetworkParameters(
    middleware=MiddlewareParameters(scheme=[256, 256]),
    learning_rate=6.3e-4,
    gradient_clip_norm=10.0,
    create_target_network=True,
)

agent.algorithm.learning_rate_decay = LinearSchedule(1.0, 0.0, 299_000)

environment = GymEnvironmentParameters(level="LunarLander-v3")

graph_manager = BasicRLGraphManager(agent, environment, schedule)

validation = PresetValidation(min_reward=200, max_env_steps=300_000)
