"""The standard Atari input filter of the DQN literature, one line in a preset.

Frames become 84x84 luminance (uint8), the last four are stacked (and stored once each in
replay, see `coach.memories.frame_store`), and rewards are clipped to [-1, 1] so that one
learning rate fits every game (Mnih et al., "Human-level control through deep reinforcement
learning", Nature 2015).
"""

from __future__ import annotations

from coach.filters.filter import ObservationFilter
from coach.filters.observation.rescale import ObservationRescaleToSizeFilter
from coach.filters.observation.rgb_to_luminance import ObservationRGBToLuminanceFilter
from coach.filters.observation.stacking import ObservationStackingFilter
from coach.filters.pipeline import InputFilter
from coach.filters.reward.clipping import RewardClippingFilter


def atari_input_filter(
    obs_type: str = "grayscale",
    size: int = 84,
    stack_size: int = 4,
    clip_rewards: bool = True,
    key: str = "observation",
) -> InputFilter:
    """The input filter of an Atari agent.

    Args:
        obs_type: The environment's ``obs_type``: ``rgb`` frames are turned into luminance
            first; ``grayscale`` frames already are (ALE computes them, which is cheaper).
        size: Frames are resized to ``size`` x ``size``.
        stack_size: How many of the last frames make one observation; 1 keeps the single
            frame, (size, size), unstacked (a recurrent network remembers instead).
        clip_rewards: Clip rewards to [-1, 1].
        key: The observation key of the frames.
    """
    filters: list[ObservationFilter] = []
    if obs_type == "rgb":
        filters.append(ObservationRGBToLuminanceFilter())
    filters.append(ObservationRescaleToSizeFilter(size, size))
    if stack_size != 1:
        filters.append(ObservationStackingFilter(stack_size))
    return InputFilter(
        observation_filters={key: filters},
        reward_filters=[RewardClippingFilter(-1.0, 1.0)] if clip_rewards else [],
    )
