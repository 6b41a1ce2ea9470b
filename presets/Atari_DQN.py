"""DQN on the Atari games (Mnih et al., 2015), with the settings of Dopamine's DQN: Breakout by
default, any other game by ``-lvl`` (``coach -p Atari_DQN -lvl pong``).

The standard pipeline: 4 frames per step max-pooled, up to 30 no-ops, sticky actions (0.25),
84x84 luminance, a stack of 4 frames stored once each in a replay of 1,000,000 transitions
(about 7.2 GB when full), rewards clipped to [-1, 1]. The Nature CNN, a squared TD error
minimized by Adam at 6.25e-5, a batch of 32 every 4 steps, the target network refreshed every
8,000 steps, epsilon from 1 to 0.01 over 250,000 steps after 20,000 steps of random play,
evaluated with epsilon 0.001. (Castro et al., "Dopamine: A Research Framework for Deep
Reinforcement Learning", 2018: its JAX DQN.)

One departure: Adam's epsilon is PyTorch's 1e-8 (as in Stable-Baselines3 and CleanRL), not
Dopamine's 1.5e-4. Dopamine's networks start with larger weights and zero biases; from
PyTorch's initialization nearly every weight's gradient on Breakout is smaller than 1.5e-4
(its root mean square over a batch: a median of 3e-5 in the first convolution, 0 in the
hidden layer, whose inputs are mostly dead at first), so that epsilon turned Adam into a
tiny SGD step: the agent still played no better than at random after 725,000 steps (with
the Huber loss) and 379,000 (with the squared error).
"""

from coach import (
    BasicRLGraphManager,
    DQNAgentParameters,
    EnvironmentEpisodes,
    EnvironmentSteps,
    InputEmbedderParameters,
    LinearSchedule,
    MiddlewareParameters,
    NetworkParameters,
    PresetValidation,
    QHeadParameters,
    ScheduleParameters,
)
from coach.environments import AtariEnvironmentParameters
from coach.filters.atari import atari_input_filter
from coach.networks.parameters import NATURE_CNN

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(20_000),
    improve_steps=EnvironmentSteps(10_000_000),
    steps_between_evaluation_periods=EnvironmentSteps(250_000),
    evaluation_steps=EnvironmentEpisodes(10),
)

agent = DQNAgentParameters()
agent.algorithm.discount = 0.99
agent.algorithm.batch_size = 32
agent.algorithm.loss = "mse"
agent.algorithm.num_consecutive_playing_steps = EnvironmentSteps(4)
agent.algorithm.num_steps_between_copying_online_weights_to_target = EnvironmentSteps(8000)
agent.memory.max_size = 1_000_000
agent.exploration.epsilon_schedule = LinearSchedule(1.0, 0.01, 250_000)
agent.exploration.evaluation_epsilon = 0.001
agent.input_filter = atari_input_filter()
agent.network_wrappers["main"] = NetworkParameters(
    input_embedders={
        "observation": InputEmbedderParameters(conv=NATURE_CNN, input_rescaling=255.0)
    },
    middleware=MiddlewareParameters(scheme=[512]),
    heads=[QHeadParameters()],
    learning_rate=6.25e-5,
    create_target_network=True,
)

environment = AtariEnvironmentParameters(level="breakout")

graph_manager = BasicRLGraphManager(agent, environment, schedule)

# Dopamine's JAX DQN (Adam and the squared error) averages 15 on Breakout over its third
# iteration (500,000 to 750,000 agent steps) and 24 over its fifth. This preset's evaluations
# passed 15 at 520,000 and 770,000 env steps on seeds 1 and 0 (19.3 and 21.8): within
# 1,000,000, as Dopamine's curve is. A case trains on to its evaluation at 1,020,000.
validation = PresetValidation(min_reward=15, max_env_steps=1_000_000)
