"""Recurrent Clipped PPO on the Atari games: Breakout by default, any other game by ``-lvl``
(``coach -p Atari_ClippedPPO_LSTM -lvl pong``). Coach's Atari_A3C_LSTM and sb3-contrib's
CnnLstmPolicy in one: the network sees a single 84x84 frame per step instead of a stack of
four, and an LSTM carries what the stack would have shown (motion, ball direction).

RL Zoo's Atari PPO settings: 8 env copies, blocks of 128 steps, 4 epochs of 256-step
minibatches, discount 0.99, GAE lambda 0.95, learning rate 2.5e-4 and clip range 0.1 falling
linearly to zero over 10M steps, entropy bonus 0.01, gradients clipped at 0.5. One network
with a policy and a value head: the Nature CNN, a 512-unit layer, an LSTM of 256 units; each
block column is cut into sequences of 32 steps, 8 to a minibatch. Evaluated with sampled
actions, as it plays in training: the policy's mode at Breakout's serve need not be FIRE, and
then every evaluation episode waited out its 27,000 steps (its first evaluation scored 1.0
over 27,000-step episodes while its training episodes scored up to 9). Its promise is modest
(feed-forward PPO with a stack of four frames passes 100 on Breakout by 2.5M steps in RL
Zoo's runs; one frame and an LSTM learn slower), and its golden run, hours of the Nature CNN
on a CPU, is optional on a machine without a GPU.
"""

from coach import (
    BasicRLGraphManager,
    ClippedPPOAgentParameters,
    EnvironmentEpisodes,
    EnvironmentSteps,
    InputEmbedderParameters,
    LinearSchedule,
    MiddlewareParameters,
    NetworkParameters,
    PresetValidation,
    RecurrentParameters,
    ScheduleParameters,
)
from coach.environments import AtariEnvironmentParameters
from coach.filters.atari import atari_input_filter
from coach.networks import CategoricalPolicyHeadParameters, VHeadParameters
from coach.networks.parameters import NATURE_CNN

BUDGET = 10_000_000

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(0),
    improve_steps=EnvironmentSteps(BUDGET),
    steps_between_evaluation_periods=EnvironmentSteps(250_000),
    evaluation_steps=EnvironmentEpisodes(10),
)

agent = ClippedPPOAgentParameters()
agent.algorithm.discount = 0.99
agent.algorithm.gae_lambda = 0.95
agent.algorithm.epochs = 4
agent.algorithm.sequence_length = 32
agent.algorithm.batch_size = 256
agent.algorithm.entropy_coefficient = 0.01
agent.algorithm.value_coefficient = 0.5
agent.algorithm.learning_rate_schedule = LinearSchedule(2.5e-4, 0.0, BUDGET)
agent.algorithm.clip_range_schedule = LinearSchedule(0.1, 0.0, BUDGET)
agent.algorithm.deterministic_evaluation = False
agent.memory.rollout_length = 128
agent.input_filter = atari_input_filter(stack_size=1)
agent.network_wrappers = {
    "main": NetworkParameters(
        input_embedders={
            "observation": InputEmbedderParameters(
                conv=NATURE_CNN, scheme=[512], input_rescaling=255.0
            )
        },
        middleware=MiddlewareParameters(scheme=[], recurrent=RecurrentParameters(size=256)),
        heads=[CategoricalPolicyHeadParameters(), VHeadParameters()],
        learning_rate=2.5e-4,
        adam_epsilon=1e-5,
        gradient_clip_norm=0.5,
    )
}

environment = AtariEnvironmentParameters(level="breakout", num_envs=8)

graph_manager = BasicRLGraphManager(agent, environment, schedule)

validation = PresetValidation(min_reward=20, max_env_steps=2_500_000)
