"""SAC on LunarLanderContinuous-v3 (Haarnoja et al., 2018), after RL Zoo: Adam at 7.3e-4,
batches of 256, 400x300 networks, soft updates of 0.01, 10,000 random steps first; evaluated
every 10,000 steps over 10 episodes."""

from coach import (
    BasicRLGraphManager,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    OutputFilter,
    PresetValidation,
    ScheduleParameters,
)
from coach.agents.ddpg import actor_network, critic_network
from coach.agents.sac import SACAgentParameters
from coach.filters.action import LinearBoxToBoxMap
from coach.networks import GaussianPolicyHeadParameters

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(10_000),
    improve_steps=EnvironmentSteps(490_000),
    steps_between_evaluation_periods=EnvironmentSteps(10_000),
    evaluation_steps=EnvironmentEpisodes(10),
)

agent = SACAgentParameters()
agent.algorithm.tau = 0.01
agent.algorithm.temperature_learning_rate = 7.3e-4
agent.network_wrappers = {
    "actor": actor_network(
        [400, 300], 7.3e-4, head=GaussianPolicyHeadParameters(state_dependent_std=True),
        target=False,
    ),
    "critic_1": critic_network([400, 300], 7.3e-4),
    "critic_2": critic_network([400, 300], 7.3e-4),
}  # fmt: skip
agent.output_filter = OutputFilter(action_filters=[LinearBoxToBoxMap(-1.0, 1.0)])

environment = GymEnvironmentParameters(level="LunarLanderContinuous-v3")

graph_manager = BasicRLGraphManager(agent, environment, schedule)

validation = PresetValidation(min_reward=200, max_env_steps=300_000)
