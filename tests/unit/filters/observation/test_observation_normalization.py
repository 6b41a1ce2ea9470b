"""Unit tests for coach/filters/observation/normalization.py."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.observation.normalization import ObservationNormalizationFilter

BOXES = [
    spaces.Box(-np.inf, np.inf, shape=(3,), dtype=np.float32),
    spaces.Box(-5.0, 5.0, shape=(2, 2), dtype=np.float64),
    spaces.Box(0, 255, shape=(4, 4, 1), dtype=np.uint8),
]
EPSILON = 1e-8


def _batches(space: spaces.Box, sizes: tuple[int, ...] = (4, 1, 7, 3)) -> list[np.ndarray]:
    """Batches with a different scale per element, and a constant element."""
    rng = np.random.default_rng(1)
    scale = np.arange(1, np.prod(space.shape) + 1).reshape(space.shape)
    batches = []
    for n in sizes:
        if space.dtype == np.uint8:
            batch = rng.integers(0, 256, size=(n, *space.shape)).astype(np.uint8)
        else:
            batch = (3.0 + scale * rng.normal(size=(n, *space.shape))).astype(space.dtype)
        batch.reshape(n, -1)[:, 0] = 2  # a constant element: normalized to 0, not NaN
        batches.append(batch)
    return batches


def _reference(x: np.ndarray, seen: list[np.ndarray], clip: float) -> np.ndarray:
    every = np.concatenate(seen).astype(np.float64)
    mean, var = every.mean(axis=0), every.var(axis=0)
    return np.clip((x.astype(np.float64) - mean) / np.sqrt(var + EPSILON), -clip, clip)


@pytest.mark.parametrize("clip", [5.0, 0.5])
@pytest.mark.parametrize("space", BOXES, ids=str)
def test_normalizes_by_the_statistics_of_every_row_seen(space: spaces.Box, clip: float) -> None:
    f = ObservationNormalizationFilter(clip=clip, epsilon=EPSILON)
    out_space = f.output_space(space)
    seen: list[np.ndarray] = []
    for batch in _batches(space):
        out = f.filter(batch)
        seen.append(batch)
        assert out.dtype == np.float32 and out.shape == batch.shape
        np.testing.assert_allclose(out, _reference(batch, seen, clip), rtol=1e-5, atol=1e-6)
        assert np.all(out.reshape(len(out), -1)[:, 0] == 0.0)
        assert all(out_space.contains(row) for row in out)
    if clip == 0.5:  # the small clip bites
        assert np.any(np.abs(out) == np.float32(0.5))


@pytest.mark.parametrize("space", BOXES, ids=str)
def test_output_space_is_the_clip_box_and_the_input_is_untouched(space: spaces.Box) -> None:
    before = copy.deepcopy(space)
    out_space = ObservationNormalizationFilter(clip=3.0).output_space(space)
    assert isinstance(out_space, spaces.Box)
    assert out_space.shape == space.shape and out_space.dtype == np.float32
    assert np.all(out_space.low == -3.0) and np.all(out_space.high == 3.0)
    assert space == before and out_space is not space


@pytest.mark.parametrize(
    "space", [spaces.Discrete(3), spaces.MultiBinary(4), spaces.Dict({})], ids=str
)
def test_refuses_a_space_that_is_not_a_box_naming_both(space: spaces.Space) -> None:
    with pytest.raises(CoachError, match=r"ObservationNormalizationFilter needs a Box.*got"):
        ObservationNormalizationFilter().output_space(space)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"clip": 0.0}, "clip must be positive"), ({"epsilon": 0.0}, "epsilon must be positive")],
)
def test_refuses_nonsense_arguments(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(CoachError, match=message):
        ObservationNormalizationFilter(**kwargs)


@pytest.mark.parametrize("space", BOXES, ids=str)
def test_update_false_and_start_episodes_leave_the_statistics_frozen(space: spaces.Box) -> None:
    f = ObservationNormalizationFilter(epsilon=EPSILON)
    f.output_space(space)
    first, second, third, _ = _batches(space)
    f.filter(first)
    state = copy.deepcopy(f.state_dict())

    out = f.filter(second, update=False)
    started = f.start_episodes(third, np.arange(len(third)))

    after = f.state_dict()
    assert after["count"] == state["count"] == len(first)
    assert np.array_equal(after["mean"], state["mean"])
    assert np.array_equal(after["var"], state["var"])
    np.testing.assert_allclose(out, _reference(second, [first], 5.0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(started, _reference(third, [first], 5.0), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("space", BOXES, ids=str)
def test_state_dict_round_trip(space: spaces.Box) -> None:
    batches = _batches(space)
    source = ObservationNormalizationFilter(clip=2.0)
    source.output_space(space)
    for batch in batches[:2]:
        source.filter(batch)
    state = source.state_dict()
    assert set(state) == {"count", "mean", "var"} and state["count"] == len(
        np.concatenate(batches[:2])
    )

    restored = ObservationNormalizationFilter(clip=2.0)
    restored.output_space(space)
    restored.load_state_dict(copy.deepcopy(state))
    # Loaded before being bound (the state knows the shape), the statistics are kept too.
    early = ObservationNormalizationFilter(clip=2.0)
    early.load_state_dict(copy.deepcopy(state))
    early.output_space(space)

    frozen = source.filter(batches[2], update=False)
    assert np.array_equal(restored.filter(batches[2], update=False), frozen)
    assert np.array_equal(early.filter(batches[2], update=False), frozen)
    updated = source.filter(batches[3])
    assert np.array_equal(restored.filter(batches[3]), updated)
    assert np.array_equal(early.filter(batches[3]), updated)


def test_repr_reproduces_the_filter() -> None:
    f = ObservationNormalizationFilter(clip=2.5, epsilon=1e-6)
    again = eval(repr(f), {"ObservationNormalizationFilter": ObservationNormalizationFilter})
    assert (again.clip, again.epsilon) == (2.5, 1e-6) and repr(again) == repr(f)
