"""A3C on CartPole-v1 (Mnih et al., 2016, "Asynchronous Methods for Deep Reinforcement
Learning"): A2C's agent (an actor and a critic, n-step returns over blocks of t_max = 5
steps, an entropy bonus of 0.01) trained by 2 asynchronous workers, each in a CartPole of its
own, applying its gradients to shared weights without locks (Hogwild!) through a shared Adam.
Rewards are scaled by 1/200, as the original Coach's CartPole_A3C scaled them: the entropy
bonus then weighs against advantages of about one, which keeps the policy from collapsing
onto one action early. ``-n N`` sets the workers, ``--backend ray`` runs them as Ray actors.
The validation counts the episodes of every worker; evaluations come every 20 of them.

The shared Adam's rate runs down from 1e-3 to 0 over the run's 300 episodes (every
worker's, on the run's clock): at a constant rate the final agents of seeds 1 and 2
averaged 111 and 46 on 20 episodes."""

from coach import (
    BasicRLGraphManager,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    LinearSchedule,
    PresetValidation,
    ScheduleParameters,
)
from coach.agents.actor_critic import ActorCriticAgentParameters
from coach.agents.on_policy import actor_critic_networks
from coach.filters.reward.rescale import RewardRescaleFilter
from coach.networks import CategoricalPolicyHeadParameters
from coach.parallel.asynchronous import AsynchronousGraphManager
from coach.parallel.parameters import AsynchronousParameters

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(0),
    improve_steps=EnvironmentEpisodes(300),
    steps_between_evaluation_periods=EnvironmentEpisodes(20),
    evaluation_steps=EnvironmentEpisodes(10),
)

agent = ActorCriticAgentParameters()
agent.algorithm.discount = 0.99
agent.algorithm.gae_lambda = 1.0
agent.algorithm.entropy_coefficient = 0.01
agent.memory.rollout_length = 5
agent.algorithm.learning_rate_decay = LinearSchedule(1.0, 0.0, 300)
agent.algorithm.learning_rate_clock = "episodes"
agent.input_filter.reward_filters = [RewardRescaleFilter(1 / 200)]
agent.network_wrappers = actor_critic_networks(
    CategoricalPolicyHeadParameters(), learning_rate=1e-3
)

environment = GymEnvironmentParameters(level="CartPole-v1", num_envs=1)

graph_manager = AsynchronousGraphManager(
    BasicRLGraphManager(agent, environment, schedule), AsynchronousParameters(num_workers=2)
)

validation = PresetValidation(min_reward=150, max_episodes=300, seeds=(0, 1, 2))
