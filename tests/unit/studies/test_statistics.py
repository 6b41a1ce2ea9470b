"""The study statistics against small cases computed by hand."""

from __future__ import annotations

import numpy as np
import pytest

from coach.errors import CoachError
from coach.studies.statistics import AGGREGATES, aggregate, curve_band


def test_the_band_of_two_runs_spans_what_their_resampled_means_can_be() -> None:
    # Resampling two runs of 0 and 2 gives a mean of 0, 1 or 2 with probabilities 1/4, 1/2,
    # 1/4: the 2.5% and 97.5% percentiles are 0 and 2.
    mean, low, high = curve_band(np.array([[0.0, 5.0], [2.0, 5.0]]), reps=4000)
    np.testing.assert_allclose(mean, [1.0, 5.0])
    np.testing.assert_allclose(low, [0.0, 5.0])  # runs that agree: no spread at all
    np.testing.assert_allclose(high, [2.0, 5.0])


def test_the_band_narrows_with_more_runs_and_is_the_same_for_the_same_seed() -> None:
    rng = np.random.default_rng(0)
    few, many = rng.normal(size=(5, 3)), rng.normal(size=(80, 3))
    _, low_few, high_few = curve_band(few, seed=1)
    _, low_many, high_many = curve_band(many, seed=1)
    assert ((high_many - low_many) < (high_few - low_few)).all()
    again = curve_band(few, seed=1)
    np.testing.assert_array_equal(again[1], low_few)


def test_final_scores_of_one_task_by_hand() -> None:
    scores = (np.arange(1, 9) / 8)[:, None]  # eight runs: 1/8 .. 8/8
    result = aggregate({"a": scores}, reps=2000)["a"]
    assert list(result) == list(AGGREGATES)
    assert result["IQM"].point == pytest.approx((3 + 4 + 5 + 6) / 4 / 8)  # the middle half
    assert result["mean"].point == pytest.approx(4.5 / 8)
    assert result["median"].point == pytest.approx(4.5 / 8)  # of the one task's mean
    assert result["optimality gap"].point == pytest.approx(1 - 4.5 / 8)
    for estimate in result.values():
        assert estimate.low <= estimate.point <= estimate.high
        assert estimate.low < estimate.high


def test_final_scores_of_two_tasks_by_hand() -> None:
    scores = np.array([[0.2, 1.0], [0.4, 1.2], [0.6, 1.4], [0.8, 1.6]])  # (runs, tasks)
    result = aggregate({"a": scores, "same": np.ones((4, 2))}, reps=1000)
    a = result["a"]
    assert a["IQM"].point == pytest.approx((0.6 + 0.8 + 1.0 + 1.2) / 4)
    assert a["median"].point == pytest.approx((0.5 + 1.3) / 2)  # the task means 0.5 and 1.3
    assert a["optimality gap"].point == pytest.approx((0.8 + 0.6 + 0.4 + 0.2) / 8)
    for estimate in result["same"].values():  # identical runs: intervals of no width
        assert estimate.low == estimate.point == estimate.high
    assert result["same"]["optimality gap"].point == 0.0


def test_the_same_seed_gives_the_same_intervals_whatever_numpy_s_global_generator_holds() -> None:
    # rliable's bootstrap draws from numpy's global generator: aggregate seeds it, and puts
    # it back as it was.
    scores = {"a": np.random.default_rng(0).normal(size=(10, 1))}
    np.random.seed(1)
    first = aggregate(scores, seed=3)
    after = np.random.rand()
    np.random.seed(2)
    assert aggregate(scores, seed=3) == first
    assert aggregate(scores, seed=4)["a"]["IQM"] != first["a"]["IQM"]
    np.random.seed(1)
    assert np.random.rand() == after  # the caller's generator as it was


def test_bad_inputs_are_refused_in_one_line() -> None:
    with pytest.raises(CoachError, match="runs, points"):
        curve_band(np.zeros(3))
    with pytest.raises(CoachError, match="confidence"):
        curve_band(np.zeros((2, 2)), confidence=1.0)
    with pytest.raises(CoachError, match="runs, tasks"):
        aggregate({"a": np.zeros(4)})
    with pytest.raises(CoachError, match="resample"):
        aggregate({"a": np.zeros((2, 1))}, reps=0)
