"""REINFORCE with a value baseline on CartPole-v1: 8 env copies, blocks of 500 steps
(whole episodes), Monte Carlo returns, one gradient step per block.

300,000 steps are 75 gradient steps, so each has to count: the learning rate starts at 3e-3
and falls linearly to 0. At 1e-3 only seed 0 of 0, 1, 2 reached 400 (the others peaked at
267 and 386); at 3e-3 every seed reaches 400 (at 70,000, 130,000 and 90,000 steps in a trial
run) and ends between 480 and 500.
"""

from coach import (
    BasicRLGraphManager,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    LinearSchedule,
    PresetValidation,
    ScheduleParameters,
)
from coach.agents.on_policy import actor_critic_networks
from coach.agents.policy_gradients import PolicyGradientsAgentParameters
from coach.networks import CategoricalPolicyHeadParameters

BUDGET = 300_000

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(0),
    improve_steps=EnvironmentSteps(BUDGET),
    steps_between_evaluation_periods=EnvironmentSteps(10_000),
    evaluation_steps=EnvironmentEpisodes(10),
)

agent = PolicyGradientsAgentParameters()
agent.algorithm.discount = 0.99
agent.algorithm.normalize_advantages = True
agent.algorithm.entropy_coefficient = 0.0
agent.algorithm.learning_rate_schedule = LinearSchedule(3e-3, 0.0, BUDGET)
agent.memory.rollout_length = 500
agent.network_wrappers = actor_critic_networks(
    CategoricalPolicyHeadParameters(), learning_rate=3e-3
)

environment = GymEnvironmentParameters(level="CartPole-v1", num_envs=8)

graph_manager = BasicRLGraphManager(agent, environment, schedule)

validation = PresetValidation(min_reward=400, max_env_steps=BUDGET, seeds=(0, 1, 2))
