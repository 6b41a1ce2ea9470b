"""What agents read off a space: the number of a discrete space's first action."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from coach.core.spaces import StackedFrames, first_action


def test_a_discrete_space_numbers_its_actions_from_its_start() -> None:
    assert first_action(spaces.Discrete(4)) == 0
    assert first_action(spaces.Discrete(4, start=-1)) == -1
    assert isinstance(first_action(spaces.Discrete(3, start=np.int64(2))), int)


def test_any_other_space_starts_at_zero() -> None:
    box = spaces.Box(-1.0, 1.0, (2,), np.float32)
    assert first_action(box) == 0
    assert first_action(StackedFrames(box, 4)) == 0
    assert first_action(spaces.MultiDiscrete([2, 3])) == 0
