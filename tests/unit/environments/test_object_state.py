"""Unit tests for coach/environments/object_state.py: an object's state as plain values."""

from __future__ import annotations

import enum
import io
import threading
from typing import Any

import numpy as np
import pytest
import torch

from coach.checkpoints import pack, unpack
from coach.environments.object_state import (
    UnsaveableState,
    object_state,
    restore_object_state,
)


class _Phase(enum.Enum):
    OPENING = 1
    END = 2


class _Part:
    def __init__(self) -> None:
        self.position = np.zeros(2)
        self.count = np.int32(0)


class _Game:
    def __init__(self) -> None:
        self.agents = ["a", "b"]
        self.order = self.agents  # aliased, as PettingZoo's agent selector does
        self.parts = [_Part(), _Part()]
        self.scores = {"a": 0.0, "b": 0.0}
        self.shape = (2, 3)
        self.seen: set[str] = set()
        self.rng = np.random.default_rng(0)
        self.method = self.play
        self.dtype = np.float32
        self.phase = _Phase.OPENING

    def play(self) -> None:
        self.parts[0].position += self.rng.random(2)
        self.parts[1].count += 1
        self.scores["a"] += 1.5
        self.seen.add(self.agents[-1])
        self.agents.remove("b")
        self.phase = _Phase.END


def _through_checkpoint(state: dict[str, Any]) -> dict[str, Any]:
    buffer = io.BytesIO()
    torch.save(pack(state), buffer)
    buffer.seek(0)
    loaded: dict[str, Any] = unpack(torch.load(buffer, weights_only=True))
    return loaded


def test_restored_object_continues_like_the_original() -> None:
    game = _Game()
    game.play()
    game.late = "set after the construction"  # type: ignore[attr-defined]
    state = _through_checkpoint(object_state(game))
    fresh = _Game()
    fresh.unsaved = 1  # type: ignore[attr-defined]
    parts = fresh.parts[0]

    restore_object_state(fresh, state)

    assert fresh.parts[0] is parts  # objects are restored in place
    assert fresh.order is fresh.agents == ["a"]  # aliases stay aliases
    np.testing.assert_array_equal(fresh.parts[0].position, game.parts[0].position)
    assert fresh.parts[1].count == 1 and fresh.parts[1].count.dtype == np.int32
    assert fresh.scores == {"a": 1.5, "b": 0.0}
    assert fresh.shape == (2, 3) and fresh.seen == {"b"}
    assert fresh.late == "set after the construction"  # type: ignore[attr-defined]
    assert not hasattr(fresh, "unsaved")
    assert fresh.rng.random() == game.rng.random()  # the generator goes on alike
    assert fresh.phase is _Phase.END and _Phase.OPENING.value == 1  # members stay untouched


def test_a_value_with_no_attributes_cannot_be_saved() -> None:
    game = _Game()
    game.lock = threading.Lock()  # type: ignore[attr-defined]
    with pytest.raises(UnsaveableState, match=r"env\.lock"):
        object_state(game)


def test_restoring_into_an_object_of_another_shape_raises() -> None:
    state = object_state(_Game())
    other = _Game()
    other.parts = [None, None]  # type: ignore[list-item]
    with pytest.raises(UnsaveableState, match=r"env\.parts\[0\]"):
        restore_object_state(other, state)


class _Player:
    def __init__(self, goal: _Part) -> None:
        self.goal = goal


class _Target:
    """An episode's pick among the parts (MPE simple_adversary's goal landmark, held by each
    agent): reached first depth first, through the players, but by a longer path."""

    def __init__(self, pick: int) -> None:
        self.parts = [_Part(), _Part()]
        self.players = [_Player(self.parts[pick])]
        self.__dict__ = {"players": self.players, "parts": self.parts}  # the players first


@pytest.mark.parametrize(("pick", "other"), [(0, 1), (1, 0), (1, 1)])
def test_an_object_is_restored_into_its_home_whatever_the_target_points_at(
    pick: int, other: int
) -> None:
    """A reference the episode drew (``players[0].goal``) may point at another part in the
    target: each saved part goes to the one at its shortest path (``parts[i]``), not to
    whatever the reference points at."""
    saved = _Target(pick)
    saved.parts[pick].position[:] = (1.0, 2.0)
    saved.parts[1 - pick].position[:] = (3.0, 4.0)
    target = _Target(other)
    parts = list(target.parts)
    restore_object_state(target, _through_checkpoint(object_state(saved)))
    assert target.parts[0] is parts[0] and target.parts[1] is parts[1]  # each its own
    assert target.players[0].goal is target.parts[pick]
    np.testing.assert_array_equal(target.parts[pick].position, (1.0, 2.0))
    np.testing.assert_array_equal(target.parts[1 - pick].position, (3.0, 4.0))


def test_two_saved_objects_that_are_one_in_the_target_cannot_be_restored() -> None:
    saved, target = _Game(), _Game()
    target.parts[1] = target.parts[0]
    with pytest.raises(UnsaveableState, match=r"env.parts\[1\] and env.parts\[0\] held two"):
        restore_object_state(target, object_state(saved))
