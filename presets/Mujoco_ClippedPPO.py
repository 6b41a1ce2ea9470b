"""Clipped PPO on the MuJoCo tasks (Schulman et al., 2017): HalfCheetah-v5 by default, any
other MuJoCo task by ``-lvl`` (``coach -p Mujoco_ClippedPPO -lvl hopper``).

The paper's MuJoCo settings, which RL Zoo and SB3 keep as their defaults: one environment,
blocks of 2,048 steps, 10 epochs of 64-step minibatches, Adam at 3e-4, discount 0.99, GAE
lambda 0.95, clip range 0.2, 64x64 tanh actor and critic, a state-independent Gaussian
policy clipped into the action bounds. Observations are normalized by running statistics
(frozen in evaluation) and rewards by the running deviation of the discounted return, as
SB3's VecNormalize does for RL Zoo's MuJoCo runs.
"""

from coach import (
    BasicRLGraphManager,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    InputFilter,
    PresetValidation,
    ScheduleParameters,
)
from coach.agents.clipped_ppo import ClippedPPOAgentParameters
from coach.agents.on_policy import actor_critic_networks
from coach.filters.observation import ObservationNormalizationFilter
from coach.filters.reward import RewardNormalizationFilter
from coach.networks import GaussianPolicyHeadParameters

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(0),
    improve_steps=EnvironmentSteps(1_000_000),
    steps_between_evaluation_periods=EnvironmentSteps(20_480),
    evaluation_steps=EnvironmentEpisodes(5),
)

agent = ClippedPPOAgentParameters()
agent.algorithm.discount = 0.99
agent.algorithm.gae_lambda = 0.95
agent.algorithm.epochs = 10
agent.algorithm.batch_size = 64
agent.algorithm.entropy_coefficient = 0.0
agent.memory.rollout_length = 2048
agent.network_wrappers = actor_critic_networks(
    GaussianPolicyHeadParameters(initial_log_std=0.0), learning_rate=3e-4
)
agent.input_filter = InputFilter(
    observation_filters={"observation": [ObservationNormalizationFilter(clip=10.0)]},
    reward_filters=[RewardNormalizationFilter(discount=0.99, clip=10.0)],
)

environment = GymEnvironmentParameters(level="HalfCheetah-v5", level_set="mujoco")

graph_manager = BasicRLGraphManager(agent, environment, schedule)

validation = PresetValidation(min_reward=1000, max_env_steps=1_000_000)
