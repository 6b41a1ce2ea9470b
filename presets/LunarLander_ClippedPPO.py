"""Clipped PPO on LunarLander-v3 (Schulman et al., 2017), after RL Zoo's tuned PPO settings:
16 env copies, blocks of 1,024 steps each, 4 epochs of 64-step minibatches, GAE lambda 0.98,
discount 0.999, entropy bonus 0.01."""

from coach import (
    BasicRLGraphManager,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    PresetValidation,
    ScheduleParameters,
)
from coach.agents.clipped_ppo import ClippedPPOAgentParameters
from coach.agents.on_policy import actor_critic_networks
from coach.networks import CategoricalPolicyHeadParameters

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(0),
    improve_steps=EnvironmentSteps(1_000_000),
    steps_between_evaluation_periods=EnvironmentSteps(32_768),
    evaluation_steps=EnvironmentEpisodes(16),
)

agent = ClippedPPOAgentParameters()
agent.algorithm.discount = 0.999
agent.algorithm.gae_lambda = 0.98
agent.algorithm.epochs = 4
agent.algorithm.batch_size = 64
agent.algorithm.entropy_coefficient = 0.01
agent.memory.rollout_length = 1024
agent.network_wrappers = actor_critic_networks(
    CategoricalPolicyHeadParameters(), learning_rate=3e-4
)

environment = GymEnvironmentParameters(level="LunarLander-v3", num_envs=16)

graph_manager = BasicRLGraphManager(agent, environment, schedule)

validation = PresetValidation(min_reward=200, max_env_steps=1_000_000)
