"""What the Pendulum presets of the continuous-control agents share (after RL Zoo's
Pendulum-v1 settings for SAC, TD3 and DDPG). Not a preset itself (its name starts with an
underscore).

Budgets: 20,000 env steps in all (heatup included), evaluated every 2,000 over 10 episodes.
The agent acts in [-1, 1], mapped linearly onto the torque bounds [-2, 2].
"""

from __future__ import annotations

from coach import (
    ConstantSchedule,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    OutputFilter,
    PresetValidation,
    ScheduleParameters,
)
from coach.agents.critics import ContinuousActorCriticAgentParameters
from coach.agents.parameters import AgentParameters
from coach.exploration.additive_noise import AdditiveNoiseParameters
from coach.filters.action import LinearBoxToBoxMap

BUDGET = 20_000


def schedule(heatup_steps: int) -> ScheduleParameters:
    return ScheduleParameters(
        heatup_steps=EnvironmentSteps(heatup_steps),
        improve_steps=EnvironmentSteps(BUDGET - heatup_steps),
        steps_between_evaluation_periods=EnvironmentSteps(2000),
        evaluation_steps=EnvironmentEpisodes(10),
    )


def act_in_unit_box(agent: AgentParameters) -> None:
    """The agent acts in [-1, 1]; the environment receives [-2, 2]."""
    agent.output_filter = OutputFilter(action_filters=[LinearBoxToBoxMap(-1.0, 1.0)])


def environment() -> GymEnvironmentParameters:
    return GymEnvironmentParameters(level="Pendulum-v1")


def validation() -> PresetValidation:
    return PresetValidation(min_reward=-200, max_env_steps=BUDGET, seeds=(0, 1, 2))


def train_per_episode(agent: ContinuousActorCriticAgentParameters) -> None:
    """RL Zoo's TD3 and DDPG settings: after each 200-step episode, 200 gradient steps on
    batches of 256; discount 0.98, a replay of 200,000, Gaussian noise of 0.1 in the [-1, 1]
    action box."""
    agent.algorithm.discount = 0.98
    agent.algorithm.num_consecutive_playing_steps = EnvironmentSteps(200)
    agent.algorithm.num_consecutive_training_steps = 200
    agent.memory.max_size = 200_000
    agent.exploration = AdditiveNoiseParameters(
        noise_schedule=ConstantSchedule(0.1), noise_as_percentage_from_action_space=False
    )
    act_in_unit_box(agent)
