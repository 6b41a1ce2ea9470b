"""Recurrent Clipped PPO on Pendulum-v1 without its angular velocity (sb3-contrib's
RecurrentPPO on RL Zoo's PendulumNoVel): the filter keeps the pole's cos and sin and drops
the velocity, so the policy has to remember where the pole was.

RL Zoo's Pendulum settings for PPO: 4 env copies, blocks of 1,024 steps, 10 epochs,
discount 0.9, GAE lambda 0.95, learning rate 1e-3, clip range 0.2, a diagonal Gaussian
clipped into the torque bounds; observations normalized by running statistics and rewards
by the discounted return's deviation. Actor and critic each have an LSTM of 64 units before
a 64-unit ReLU layer; each block column is cut into sequences of 32 steps, two to a
minibatch.
"""

from coach import (
    BasicRLGraphManager,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    InputFilter,
    PresetValidation,
    RecurrentParameters,
    ScheduleParameters,
)
from coach.agents.clipped_ppo import ClippedPPOAgentParameters
from coach.agents.on_policy import actor_critic_networks
from coach.filters.observation import (
    ObservationNormalizationFilter,
    ObservationSelectEntriesFilter,
)
from coach.filters.reward import RewardNormalizationFilter
from coach.networks import GaussianPolicyHeadParameters

BUDGET = 500_000
DISCOUNT = 0.9

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(0),
    improve_steps=EnvironmentSteps(BUDGET),
    steps_between_evaluation_periods=EnvironmentSteps(16_384),
    evaluation_steps=EnvironmentEpisodes(10),
)

agent = ClippedPPOAgentParameters()
agent.algorithm.discount = DISCOUNT
agent.algorithm.gae_lambda = 0.95
agent.algorithm.epochs = 10
agent.algorithm.sequence_length = 32
agent.algorithm.batch_size = 64
agent.algorithm.entropy_coefficient = 0.0
agent.memory.rollout_length = 1024
agent.network_wrappers = actor_critic_networks(
    GaussianPolicyHeadParameters(initial_log_std=-0.5),
    learning_rate=1e-3,
    scheme=[64],
    activation="relu",
    recurrent=RecurrentParameters(cell="lstm", size=64),
)
agent.input_filter = InputFilter(
    observation_filters={
        "observation": [
            ObservationSelectEntriesFilter([0, 1]),  # cos and sin of the angle
            ObservationNormalizationFilter(clip=10.0),
        ]
    },
    reward_filters=[RewardNormalizationFilter(discount=DISCOUNT, clip=10.0)],
)

environment = GymEnvironmentParameters(level="Pendulum-v1", num_envs=4)

graph_manager = BasicRLGraphManager(agent, environment, schedule)

validation = PresetValidation(min_reward=-300, max_env_steps=BUDGET, seeds=(0, 1, 2))
