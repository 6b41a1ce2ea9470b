"""A2C on CartPole-v1 (Mnih et al., 2016), after RL Zoo's A2C settings: 8 env copies, blocks
of 5 steps, one gradient step per block, n-step returns (lambda = 1)."""

from coach import (
    BasicRLGraphManager,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    PresetValidation,
    ScheduleParameters,
)
from coach.agents.actor_critic import ActorCriticAgentParameters
from coach.agents.on_policy import actor_critic_networks
from coach.networks import CategoricalPolicyHeadParameters

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(0),
    improve_steps=EnvironmentSteps(500_000),
    steps_between_evaluation_periods=EnvironmentSteps(10_000),
    evaluation_steps=EnvironmentEpisodes(10),
)

agent = ActorCriticAgentParameters()
agent.algorithm.discount = 0.99
agent.algorithm.gae_lambda = 1.0
agent.algorithm.entropy_coefficient = 0.0
agent.memory.rollout_length = 5
agent.network_wrappers = actor_critic_networks(
    CategoricalPolicyHeadParameters(), learning_rate=7e-4
)

environment = GymEnvironmentParameters(level="CartPole-v1", num_envs=8)

graph_manager = BasicRLGraphManager(agent, environment, schedule)

validation = PresetValidation(min_reward=475, max_env_steps=500_000)
