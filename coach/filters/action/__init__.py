"""Action filters: adapt the environment's action space to the one an agent acts in."""

from coach.filters.action.box_discretization import BoxDiscretization
from coach.filters.action.box_masking import BoxMasking
from coach.filters.action.clip_to_bounds import ActionClipToBounds
from coach.filters.action.discrete_map import (
    FullDiscreteActionSpaceMap,
    PartialDiscreteActionSpaceMap,
)
from coach.filters.action.linear_box_to_box import LinearBoxToBoxMap

__all__ = [
    "ActionClipToBounds",
    "BoxDiscretization",
    "BoxMasking",
    "FullDiscreteActionSpaceMap",
    "LinearBoxToBoxMap",
    "PartialDiscreteActionSpaceMap",
]
