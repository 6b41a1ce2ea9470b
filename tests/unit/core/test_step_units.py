"""Unit tests for coach/core/step_units.py: typed step counts that only mix with their own kind."""

from __future__ import annotations

import itertools
import operator

import pytest

from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps, StepUnit, TrainingSteps

UNITS = [EnvironmentSteps, EnvironmentEpisodes, TrainingSteps]
MIXED_PAIRS = list(itertools.permutations(UNITS, 2))


def _pair_id(pair: tuple[type[StepUnit], type[StepUnit]]) -> str:
    return f"{pair[0].__name__}-{pair[1].__name__}"


@pytest.mark.parametrize("unit", UNITS)
def test_ordering_within_one_unit(unit: type[StepUnit]) -> None:
    small, big = unit(3), unit(7)
    assert small < big
    assert not big < small
    assert small <= big
    assert small <= unit(3)
    assert big > small
    assert not small > big
    assert big >= small
    assert big >= unit(7)


@pytest.mark.parametrize("unit", UNITS)
def test_equality_within_one_unit(unit: type[StepUnit]) -> None:
    assert unit(5) == unit(5)
    assert unit(5) != unit(6)


@pytest.mark.parametrize("unit", UNITS)
def test_add_and_subtract_keep_the_unit(unit: type[StepUnit]) -> None:
    total = unit(3) + unit(4)
    assert type(total) is unit
    assert total.num_steps == 7
    difference = unit(10) - unit(4)
    assert type(difference) is unit
    assert difference.num_steps == 6


@pytest.mark.parametrize("unit", UNITS)
def test_subtracting_below_zero_raises(unit: type[StepUnit]) -> None:
    with pytest.raises(ValueError, match=">= 0"):
        unit(2) - unit(3)


@pytest.mark.parametrize("unit", UNITS)
def test_multiplication_by_a_whole_number(unit: type[StepUnit]) -> None:
    assert unit(4) * 3 == unit(12)
    assert 3 * unit(4) == unit(12)
    assert type(2 * unit(4)) is unit
    assert unit(4) * 0 == unit(0)


@pytest.mark.parametrize("factor", [1.5, 2.0, True, "2"])
def test_multiplication_by_anything_else_raises(factor: object) -> None:
    with pytest.raises(TypeError):
        EnvironmentSteps(4) * factor  # type: ignore[operator]


@pytest.mark.parametrize(
    "compare", [operator.lt, operator.le, operator.gt, operator.ge], ids=lambda f: f.__name__
)
@pytest.mark.parametrize("pair", MIXED_PAIRS, ids=_pair_id)
def test_ordering_across_units_raises(
    pair: tuple[type[StepUnit], type[StepUnit]], compare: object
) -> None:
    first, second = pair
    with pytest.raises(TypeError, match=first.__name__):
        compare(first(5), second(9))  # type: ignore[operator]


@pytest.mark.parametrize("combine", [operator.add, operator.sub], ids=lambda f: f.__name__)
@pytest.mark.parametrize("pair", MIXED_PAIRS, ids=_pair_id)
def test_arithmetic_across_units_raises(
    pair: tuple[type[StepUnit], type[StepUnit]], combine: object
) -> None:
    first, second = pair
    with pytest.raises(TypeError, match=second.__name__):
        combine(first(9), second(5))  # type: ignore[operator]


@pytest.mark.parametrize("unit", UNITS)
def test_plain_numbers_do_not_mix(unit: type[StepUnit]) -> None:
    with pytest.raises(TypeError):
        unit(5) < 9  # noqa: B015
    with pytest.raises(TypeError):
        unit(5) + 1
    assert unit(5) != 5


@pytest.mark.parametrize("pair", MIXED_PAIRS, ids=_pair_id)
def test_equality_across_units_is_false(pair: tuple[type[StepUnit], type[StepUnit]]) -> None:
    first, second = pair
    assert not first(5) == second(5)  # noqa: SIM201
    assert first(5) != second(5)


@pytest.mark.parametrize("unit", UNITS)
@pytest.mark.parametrize("bad", [1.0, 2.5, "3", None, True])
def test_non_int_counts_raise_type_error(unit: type[StepUnit], bad: object) -> None:
    with pytest.raises(TypeError, match="whole number"):
        unit(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("unit", UNITS)
def test_negative_counts_raise_value_error(unit: type[StepUnit]) -> None:
    with pytest.raises(ValueError, match="-1"):
        unit(-1)


def test_zero_is_allowed() -> None:
    assert EnvironmentSteps(0).num_steps == 0


@pytest.mark.parametrize("unit", UNITS)
def test_repr_names_the_unit_and_count(unit: type[StepUnit]) -> None:
    assert repr(unit(500)) == f"{unit.__name__}(500)"


def test_repr_of_environment_steps() -> None:
    assert repr(EnvironmentSteps(500)) == "EnvironmentSteps(500)"


@pytest.mark.parametrize("unit", UNITS)
def test_hashable_and_equal_values_hash_equal(unit: type[StepUnit]) -> None:
    assert hash(unit(5)) == hash(unit(5))
    assert len({unit(5), unit(5), unit(6)}) == 2
    assert {unit(5): "x"}[unit(5)] == "x"


def test_equal_counts_of_different_units_are_distinct_keys() -> None:
    keys = {EnvironmentSteps(5), EnvironmentEpisodes(5), TrainingSteps(5)}
    assert len(keys) == 3


def test_frozen() -> None:
    steps = EnvironmentSteps(5)
    with pytest.raises(AttributeError):
        steps.num_steps = 6  # type: ignore[misc]
