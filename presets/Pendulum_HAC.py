"""Hierarchical Actor-Critic on PendulumWithGoals (Levy et al., 2019): two HAC levels on DDPG.

The top level sets subgoals (angle and velocity) for the bottom one, which applies torques
for at most 10 steps per subgoal; episodes last at most 200 steps and end when the pendulum
stands up (within 0.075 of the goal's cosine and sine, 0.75 of its velocity). Each level
keeps its own hindsight replay (4 "future" copies per step), tests 30% of its subgoals, and
learns with a gradient step per action on batches of 256 (three layers of 64 units, Adam at
1e-3, soft updates of 0.05, discount 0.98, Gaussian exploration of 5% of the range).
"""

from coach import (
    ConstantSchedule,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    PresetValidation,
    ScheduleParameters,
)
from coach.agents.hac import HACAgentParameters
from coach.core.goals import GoalReward
from coach.exploration.additive_noise import AdditiveNoiseParameters
from coach.graph_managers.hrl import HACGraphManager, HierarchyParameters
from coach.level_manager import LevelGoals
from coach.networks.parameters import InputEmbedderParameters

THRESHOLDS = [0.075, 0.075, 0.75]


def level() -> HACAgentParameters:
    p = HACAgentParameters()
    p.algorithm.discount = 0.98
    p.algorithm.tau = 0.05
    p.algorithm.batch_size = 256
    p.algorithm.goal_reward = GoalReward(dimension_thresholds=THRESHOLDS)
    p.memory.goal_reward = GoalReward(dimension_thresholds=THRESHOLDS)
    p.memory.max_size = 200_000
    p.exploration = AdditiveNoiseParameters(noise_schedule=ConstantSchedule(0.05))
    for net in p.network_wrappers.values():
        net.middleware.scheme = [64, 64, 64]
        keys = [
            "observation",
            "desired_goal",
            *(["action"] if "action" in net.input_embedders else []),
        ]
        net.input_embedders = {k: InputEmbedderParameters() for k in keys}
    return p


schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(2000),
    improve_steps=EnvironmentSteps(198_000),
    steps_between_evaluation_periods=EnvironmentSteps(10_000),
    evaluation_steps=EnvironmentEpisodes(10),
)
hierarchy = HierarchyParameters(
    horizons=[10], goals=LevelGoals(goal_reward=GoalReward(dimension_thresholds=THRESHOLDS))
)
environment = GymEnvironmentParameters(
    level="coach/PendulumWithGoals-v0", kwargs={"time_limit": 200}
)
graph_manager = HACGraphManager([level(), level()], environment, schedule, hierarchy)
validation = PresetValidation(min_success_rate=0.8, max_env_steps=100_000)
