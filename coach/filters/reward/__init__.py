"""Reward filters: each transforms a batch of rewards ``(B,)``."""

from coach.filters.reward.clipping import RewardClippingFilter
from coach.filters.reward.normalization import RewardNormalizationFilter
from coach.filters.reward.rescale import RewardRescaleFilter

__all__ = ["RewardClippingFilter", "RewardNormalizationFilter", "RewardRescaleFilter"]
