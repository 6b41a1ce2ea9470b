"""Clipped PPO on CartPole-v1 (Schulman et al., 2017), after RL Zoo's tuned PPO settings:
8 env copies, blocks of 32 steps each, 20 epochs of one 256-step minibatch per block,
GAE lambda 0.8, discount 0.98, learning rate and clip range falling linearly to zero."""

from coach import (
    BasicRLGraphManager,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    LinearSchedule,
    PresetValidation,
    ScheduleParameters,
)
from coach.agents.clipped_ppo import ClippedPPOAgentParameters
from coach.agents.on_policy import actor_critic_networks
from coach.networks import CategoricalPolicyHeadParameters

BUDGET = 100_000

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(0),
    improve_steps=EnvironmentSteps(BUDGET),
    steps_between_evaluation_periods=EnvironmentSteps(5000),
    evaluation_steps=EnvironmentEpisodes(10),
)

agent = ClippedPPOAgentParameters()
agent.algorithm.discount = 0.98
agent.algorithm.gae_lambda = 0.8
agent.algorithm.epochs = 20
agent.algorithm.batch_size = 256
agent.algorithm.entropy_coefficient = 0.0
agent.algorithm.learning_rate_schedule = LinearSchedule(1e-3, 0.0, BUDGET)
agent.algorithm.clip_range_schedule = LinearSchedule(0.2, 0.0, BUDGET)
agent.memory.rollout_length = 32
agent.network_wrappers = actor_critic_networks(
    CategoricalPolicyHeadParameters(), learning_rate=1e-3
)

environment = GymEnvironmentParameters(level="CartPole-v1", num_envs=8)

graph_manager = BasicRLGraphManager(agent, environment, schedule)

validation = PresetValidation(min_reward=475, max_env_steps=BUDGET, seeds=(0, 1, 2))
