"""What the HAC presets on PendulumWithGoals share (Levy et al., 2019). Not a preset itself
(its name starts with an underscore).

Episodes last at most 200 steps and end when the pendulum stands up: within 0.075 of the
goal's cosine and sine and 0.75 of its velocity, the test every level's goals are reached
by. Each level keeps its own hindsight replay (4 "future" copies per step; the levels that
set subgoals also store the subgoals reached as their actions), tests 30% of its subgoals,
and learns on batches of 256 (three layers of 64 units, soft updates of 0.05, discount 0.98,
Gaussian exploration of 5% of the range) with a gradient step per action, from a replay of
its last 200,000 transitions at 1e-3 unless the preset says otherwise.
"""

from __future__ import annotations

from coach import (
    ConstantSchedule,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    ScheduleParameters,
)
from coach.agents.hac import HACAgentParameters
from coach.core.goals import GoalReward
from coach.exploration.additive_noise import AdditiveNoiseParameters
from coach.graph_managers.hrl import HACGraphManager, HierarchyParameters
from coach.level_manager import LevelGoals
from coach.memories.hierarchical_hindsight import HierarchicalHindsightExperienceReplayParameters
from coach.networks.parameters import InputEmbedderParameters

THRESHOLDS = [0.075, 0.075, 0.75]
"""How near the goal's cosine, sine and velocity a state reaches it."""


def level(sets_goals: bool, learning_rate: float, replay_size: int = 200_000) -> HACAgentParameters:
    """One HAC level; ``sets_goals`` for every level but the bottom; Adam at ``learning_rate``
    for its actor and critic, a hindsight replay of its last ``replay_size`` transitions."""
    p = HACAgentParameters()
    p.algorithm.discount = 0.98
    p.algorithm.tau = 0.05
    p.algorithm.batch_size = 256
    p.algorithm.goal_reward = GoalReward(dimension_thresholds=THRESHOLDS)
    if sets_goals:
        p.memory = HierarchicalHindsightExperienceReplayParameters()
    p.memory.goal_reward = GoalReward(dimension_thresholds=THRESHOLDS)
    p.memory.max_size = replay_size
    p.exploration = AdditiveNoiseParameters(noise_schedule=ConstantSchedule(0.05))
    for net in p.network_wrappers.values():
        net.middleware.scheme = [64, 64, 64]
        net.learning_rate = learning_rate
        keys = [
            "observation",
            "desired_goal",
            *(["action"] if "action" in net.input_embedders else []),
        ]
        net.input_embedders = {k: InputEmbedderParameters() for k in keys}
    return p


def graph_manager(
    horizons: list[int],
    improve_steps: int,
    learning_rate: float = 1e-3,
    evaluation_episodes: int = 10,
    replay_size: int = 200_000,
) -> HACGraphManager:
    """``len(horizons) + 1`` HAC levels on PendulumWithGoals, the top level's first, each
    learning at ``learning_rate`` from its last ``replay_size`` transitions; 2,000 steps of
    heatup, evaluations of ``evaluation_episodes`` episodes every 10,000 steps."""
    schedule = ScheduleParameters(
        heatup_steps=EnvironmentSteps(2000),
        improve_steps=EnvironmentSteps(improve_steps),
        steps_between_evaluation_periods=EnvironmentSteps(10_000),
        evaluation_steps=EnvironmentEpisodes(evaluation_episodes),
    )
    hierarchy = HierarchyParameters(
        horizons=horizons,
        goals=LevelGoals(goal_reward=GoalReward(dimension_thresholds=THRESHOLDS)),
    )
    environment = GymEnvironmentParameters(
        level="coach/PendulumWithGoals-v0", kwargs={"time_limit": 200}
    )
    levels = [level(True, learning_rate, replay_size) for _ in horizons]
    levels.append(level(False, learning_rate, replay_size))
    return HACGraphManager(levels, environment, schedule, hierarchy)
