"""Unit tests for coach/filters/running_stats.py."""

from __future__ import annotations

import numpy as np
import pytest

from coach.errors import CoachError
from coach.filters.running_stats import RunningMeanStd

SHAPES = [(), (3,), (2, 4)]
BATCH_SIZES = [5, 1, 0, 17, 2]


def _batches(shape: tuple[int, ...], offset: float = 0.0) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [offset + rng.normal(1.0, 3.0, size=(n, *shape)) for n in BATCH_SIZES]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_starts_as_the_identity_normalizer(shape: tuple[int, ...]) -> None:
    stats = RunningMeanStd(shape)
    assert stats.count == 0.0
    assert np.array_equal(stats.mean, np.zeros(shape)) and np.shape(stats.mean) == shape
    assert np.array_equal(stats.var, np.ones(shape)) and np.shape(stats.var) == shape


@pytest.mark.parametrize("offset", [0.0, 1e6], ids=["centred", "far-from-zero"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_statistics_are_those_of_every_sample_seen(shape: tuple[int, ...], offset: float) -> None:
    stats = RunningMeanStd(shape)
    seen: list[np.ndarray] = []
    for batch in _batches(shape, offset):
        stats.update(batch)
        seen.append(batch)
        if sum(len(b) for b in seen) == 0:
            continue
        every = np.concatenate(seen)
        assert stats.count == len(every) and isinstance(stats.count, float)
        np.testing.assert_allclose(stats.mean, every.mean(axis=0), rtol=1e-12)
        np.testing.assert_allclose(stats.var, every.var(axis=0), rtol=1e-9)
        assert np.shape(stats.mean) == shape and np.shape(stats.var) == shape


def test_statistics_of_integer_samples_are_float64() -> None:
    stats = RunningMeanStd((2,))
    stats.update(np.array([[0, 255], [255, 255], [255, 0]], dtype=np.uint8))
    np.testing.assert_allclose(stats.mean, [170.0, 170.0])
    np.testing.assert_allclose(stats.var, [255.0**2 * 2 / 9] * 2)
    assert stats.mean.dtype == np.float64 and stats.var.dtype == np.float64


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_state_dict_round_trip(shape: tuple[int, ...]) -> None:
    source = RunningMeanStd(shape)
    batches = _batches(shape)
    for batch in batches[:3]:
        source.update(batch)
    state = source.state_dict()
    assert set(state) == {"count", "mean", "var"} and isinstance(state["count"], float)

    restored = RunningMeanStd(shape)
    restored.load_state_dict(state)
    for batch in batches[3:]:
        source.update(batch)
        restored.update(batch)
    assert restored.count == source.count
    assert np.array_equal(restored.mean, source.mean)
    assert np.array_equal(restored.var, source.var)


def test_a_state_dict_is_a_snapshot() -> None:
    stats = RunningMeanStd((2,))
    stats.update(np.ones((3, 2)))
    state = stats.state_dict()
    stats.update(np.full((3, 2), 7.0))
    assert state["count"] == 3.0
    assert np.array_equal(state["mean"], [1.0, 1.0]) and np.array_equal(state["var"], [0.0, 0.0])
    # ...and writing into it (or into what was loaded) leaves the statistics alone.
    state = stats.state_dict()
    state["mean"][...] = 99.0
    state["var"][...] = 99.0
    assert np.array_equal(stats.mean, [4.0, 4.0]) and np.array_equal(stats.var, [9.0, 9.0])
    loaded = RunningMeanStd((2,))
    loaded.load_state_dict(state)
    state["mean"][...] = 0.0
    assert np.array_equal(loaded.mean, [99.0, 99.0])


def test_refuses_a_batch_of_the_wrong_shape() -> None:
    with pytest.raises(CoachError, match=r"shaped \(3,\) got a batch shaped \(4, 2\)"):
        RunningMeanStd((3,)).update(np.zeros((4, 2)))


def test_refuses_to_load_statistics_of_another_shape() -> None:
    other = RunningMeanStd((2,)).state_dict()
    with pytest.raises(CoachError, match=r"shaped \(3,\) cannot load statistics shaped \(2,\)"):
        RunningMeanStd((3,)).load_state_dict(other)


@pytest.mark.parametrize("shape", [(), (3,), (2, 2)])
def test_merging_the_statistics_of_parts_equals_taking_in_the_whole(
    shape: tuple[int, ...],
) -> None:
    rng = np.random.default_rng(0)
    parts = [rng.normal(i, 1 + i, size=(n, *shape)) for i, n in enumerate((5, 40, 1, 17))]
    whole = RunningMeanStd(shape)
    whole.update(np.concatenate(parts))
    merged = RunningMeanStd(shape)
    for part in parts:
        stats = RunningMeanStd(shape)
        stats.update(part)
        merged.merge(stats.state_dict())
    assert merged.count == whole.count
    np.testing.assert_allclose(merged.mean, whole.mean, rtol=1e-12)
    np.testing.assert_allclose(merged.var, whole.var, rtol=1e-12)


@pytest.mark.parametrize("shape", [(), (4,)])
def test_since_gives_what_was_taken_in_after_a_state(shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(1)
    earlier_batch, later_batch = rng.normal(3, 2, (30, *shape)), rng.normal(-1, 5, (12, *shape))
    stats = RunningMeanStd(shape)
    stats.update(earlier_batch)
    earlier = stats.state_dict()
    stats.update(later_batch)
    delta = stats.since(earlier)
    alone = RunningMeanStd(shape)
    alone.update(later_batch)
    assert delta["count"] == 12
    np.testing.assert_allclose(delta["mean"], alone.mean, rtol=1e-10)
    np.testing.assert_allclose(delta["var"], alone.var, rtol=1e-9)
    # What a learner does with it: the earlier statistics and the delta give the current.
    learner = RunningMeanStd(shape)
    learner.load_state_dict(earlier)
    learner.merge(delta)
    np.testing.assert_allclose(learner.mean, stats.mean, rtol=1e-12)
    np.testing.assert_allclose(learner.var, stats.var, rtol=1e-10)
    assert stats.since(stats.state_dict())["count"] == 0  # nothing new
