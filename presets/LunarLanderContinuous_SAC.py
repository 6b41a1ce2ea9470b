"""SAC on LunarLanderContinuous-v3 (Haarnoja et al., 2018), after RL Zoo: Adam at 7.3e-4,
batches of 256, 400x300 networks, soft updates of 0.01, 10,000 random steps first; evaluated
every 10,000 steps over 10 episodes.

The rates (the networks' and the temperature's) run down linearly to 0 over the 290,000
training steps, which end at the validation's budget: at a constant rate seed 2 never reached
200 within 300,000 steps and its best.pt averaged -11.7; run down, seeds 0 and 2 reached it at
120,000 and 80,000 steps and their final agents averaged 258.0 and 270.2 on 20 fresh episodes.
"""

from coach import (
    BasicRLGraphManager,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    LinearSchedule,
    OutputFilter,
    PresetValidation,
    ScheduleParameters,
)
from coach.agents.ddpg import actor_network, critic_network
from coach.agents.sac import SACAgentParameters
from coach.filters.action import LinearBoxToBoxMap
from coach.networks import GaussianPolicyHeadParameters

TRAINING_STEPS = 290_000
"""The training steps after heatup: with it, the validation's budget."""

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(10_000),
    improve_steps=EnvironmentSteps(TRAINING_STEPS),
    steps_between_evaluation_periods=EnvironmentSteps(10_000),
    evaluation_steps=EnvironmentEpisodes(10),
)

agent = SACAgentParameters()
agent.algorithm.tau = 0.01
agent.algorithm.learning_rate_decay = LinearSchedule(1.0, 0.0, TRAINING_STEPS)
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
