"""CartPole without velocities (CartPoleNoVel), the partially observed task of RL Zoo's
recurrent PPO, and the Clipped PPO settings its presets share.

The observation filter keeps CartPole-v1's cart position and pole angle and drops both
velocities: one observation no longer tells which way the pole is falling, so a policy has
to remember. Observations are then normalized by running statistics and rewards by the
running deviation of the discounted return (RL Zoo's ``normalize: true``). The rest is RL
Zoo's ppo_lstm setting for CartPoleNoVel-v1: 8 env copies, blocks of 32 steps each, 20
epochs of one 256-step minibatch per block, GAE lambda 0.8, discount 0.98, learning rate
1e-3 and clip range 0.2 both falling linearly to zero over 100,000 steps, no entropy bonus.
Not a preset itself (its name starts with an underscore).
"""

from __future__ import annotations

from coach import (
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    InputFilter,
    LinearSchedule,
    ScheduleParameters,
)
from coach.agents.clipped_ppo import ClippedPPOAgentParameters
from coach.filters.observation import (
    ObservationNormalizationFilter,
    ObservationSelectEntriesFilter,
)
from coach.filters.reward import RewardNormalizationFilter

BUDGET = 100_000
DISCOUNT = 0.98
POSITIONS = [0, 2]
"""CartPole's cart position and pole angle (its velocities are entries 1 and 3)."""


def schedule() -> ScheduleParameters:
    return ScheduleParameters(
        heatup_steps=EnvironmentSteps(0),
        improve_steps=EnvironmentSteps(BUDGET),
        steps_between_evaluation_periods=EnvironmentSteps(5000),
        evaluation_steps=EnvironmentEpisodes(10),
    )


def environment() -> GymEnvironmentParameters:
    return GymEnvironmentParameters(level="CartPole-v1", num_envs=8)


def without_velocities() -> InputFilter:
    """Positions only, normalized; rewards scaled by the discounted return's deviation."""
    return InputFilter(
        observation_filters={
            "observation": [
                ObservationSelectEntriesFilter(POSITIONS),
                ObservationNormalizationFilter(clip=10.0),
            ]
        },
        reward_filters=[RewardNormalizationFilter(discount=DISCOUNT, clip=10.0)],
    )


def clipped_ppo() -> ClippedPPOAgentParameters:
    """Clipped PPO with RL Zoo's CartPoleNoVel settings (its networks are the preset's)."""
    agent = ClippedPPOAgentParameters()
    agent.algorithm.discount = DISCOUNT
    agent.algorithm.gae_lambda = 0.8
    agent.algorithm.epochs = 20
    agent.algorithm.batch_size = 256
    agent.algorithm.entropy_coefficient = 0.0
    agent.algorithm.learning_rate_schedule = LinearSchedule(1e-3, 0.0, BUDGET)
    agent.algorithm.clip_range_schedule = LinearSchedule(0.2, 0.0, BUDGET)
    agent.memory.rollout_length = 32
    agent.input_filter = without_velocities()
    return agent
