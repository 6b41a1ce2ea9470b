"""Unit tests for coach/schedules.py: values as pure functions of a step count."""

from __future__ import annotations

import pytest

from coach.core.step_units import EnvironmentSteps
from coach.schedules import (
    ConstantSchedule,
    ExponentialSchedule,
    LinearSchedule,
    PieceWiseSchedule,
    Schedule,
)


@pytest.mark.parametrize("step", [0, 1, 10, 1_000_000])
def test_constant_schedule(step: int) -> None:
    schedule = ConstantSchedule(0.25)
    assert schedule.value(step) == 0.25
    assert schedule(step) == 0.25


@pytest.mark.parametrize(
    ("step", "expected"),
    [(0, 1.0), (25, 0.75), (50, 0.5), (99, 0.01), (100, 0.0), (101, 0.0), (10_000, 0.0)],
)
def test_linear_schedule_decays_in_a_straight_line(step: int, expected: float) -> None:
    assert LinearSchedule(1.0, 0.0, 100).value(step) == pytest.approx(expected)


def test_linear_schedule_can_grow() -> None:
    schedule = LinearSchedule(0.4, 1.0, 10)
    assert schedule(0) == pytest.approx(0.4)
    assert schedule(5) == pytest.approx(0.7)
    assert schedule(10) == 1.0
    assert schedule(50) == 1.0


@pytest.mark.parametrize("step", [0, 1, 100])
def test_linear_schedule_with_zero_decay_steps_is_the_final_value(step: int) -> None:
    assert LinearSchedule(1.0, 0.05, 0).value(step) == 0.05


def test_linear_schedule_rejects_negative_decay_steps() -> None:
    with pytest.raises(ValueError, match="decay_steps"):
        LinearSchedule(1.0, 0.0, -1)


def test_exponential_schedule_decays_to_a_floor() -> None:
    schedule = ExponentialSchedule(1.0, 0.1, 0.5)
    assert schedule(0) == 1.0
    assert schedule(1) == pytest.approx(0.5)
    assert schedule(3) == pytest.approx(0.125)
    # 0.5**4 = 0.0625 would pass the floor.
    assert schedule(4) == 0.1
    assert schedule(1000) == 0.1


def test_exponential_schedule_grows_to_a_cap() -> None:
    schedule = ExponentialSchedule(0.4, 1.0, 1.5)
    assert schedule(0) == pytest.approx(0.4)
    assert schedule(1) == pytest.approx(0.6)
    assert schedule(2) == pytest.approx(0.9)
    # 0.4 * 1.5**3 = 1.35 would pass the cap.
    assert schedule(3) == 1.0
    assert schedule(100) == 1.0


@pytest.mark.parametrize("rate", [0.0, -0.5])
def test_exponential_schedule_rejects_non_positive_rates(rate: float) -> None:
    with pytest.raises(ValueError, match="decay_rate"):
        ExponentialSchedule(1.0, 0.1, rate)


def _three_pieces(first_duration: object = 10, second_duration: object = 20) -> PieceWiseSchedule:
    return PieceWiseSchedule(
        [
            (ConstantSchedule(1.0), first_duration),  # type: ignore[list-item]
            (LinearSchedule(1.0, 0.0, 20), second_duration),  # type: ignore[list-item]
            (LinearSchedule(0.0, -1.0, 10), 5),
        ]
    )


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        (0, 1.0),
        (9, 1.0),
        # The second piece counts from its own start (step 10 is its step 0).
        (10, 1.0),
        (15, 0.75),
        (20, 0.5),
        (29, 0.05),
        # The last piece runs on past its duration, counting from its start (step 30).
        (30, 0.0),
        (35, -0.5),
        (40, -1.0),
        (1000, -1.0),
    ],
)
def test_piecewise_schedule(step: int, expected: float) -> None:
    assert _three_pieces().value(step) == pytest.approx(expected)


def test_piecewise_schedule_accepts_step_units_as_durations() -> None:
    with_units = _three_pieces(EnvironmentSteps(10), EnvironmentSteps(20))
    plain = _three_pieces()
    assert [n for _, n in with_units.pieces] == [10, 20, 5]
    assert all(type(n) is int for _, n in with_units.pieces)
    for step in (0, 9, 10, 15, 29, 30, 35):
        assert with_units(step) == pytest.approx(plain(step))


def test_piecewise_schedule_with_a_single_piece_runs_on() -> None:
    schedule = PieceWiseSchedule([(LinearSchedule(1.0, 0.0, 10), 3)])
    assert schedule(5) == pytest.approx(0.5)
    assert schedule(20) == 0.0


def test_piecewise_schedule_needs_a_piece() -> None:
    with pytest.raises(ValueError, match="at least one piece"):
        PieceWiseSchedule([])


@pytest.mark.parametrize(
    "schedule",
    [
        ConstantSchedule(0.3),
        LinearSchedule(1.0, 0.0, 7),
        ExponentialSchedule(1.0, 0.01, 0.9),
        PieceWiseSchedule([(ConstantSchedule(1.0), 3), (LinearSchedule(1.0, 0.0, 5), 0)]),
    ],
    ids=lambda s: type(s).__name__,
)
def test_schedules_are_pure_functions_of_the_step(schedule: Schedule) -> None:
    first = [schedule(step) for step in range(12)]
    second = [schedule(step) for step in reversed(range(12))][::-1]
    assert first == second
    assert schedule(4) == schedule.value(4)
