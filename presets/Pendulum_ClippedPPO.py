"""Clipped PPO on Pendulum-v1 (Schulman et al., 2017), after RL Zoo's PPO settings: 4 env
copies, blocks of 1,024 steps, 10 epochs of 64-step minibatches, discount 0.9, GAE lambda
0.95, a diagonal Gaussian policy clipped into the torque bounds."""

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
from coach.networks import GaussianPolicyHeadParameters

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(0),
    improve_steps=EnvironmentSteps(300_000),
    steps_between_evaluation_periods=EnvironmentSteps(8192),
    evaluation_steps=EnvironmentEpisodes(10),
)

agent = ClippedPPOAgentParameters()
agent.algorithm.discount = 0.9
agent.algorithm.gae_lambda = 0.95
agent.algorithm.epochs = 10
agent.algorithm.batch_size = 64
agent.algorithm.entropy_coefficient = 0.0
agent.memory.rollout_length = 1024
agent.network_wrappers = actor_critic_networks(
    GaussianPolicyHeadParameters(initial_log_std=0.0), learning_rate=1e-3
)

environment = GymEnvironmentParameters(level="Pendulum-v1", num_envs=4)

graph_manager = BasicRLGraphManager(agent, environment, schedule)

validation = PresetValidation(min_reward=-250, max_env_steps=300_000)
