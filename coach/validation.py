"""Checks of parameter values, for the ``validate()`` method of a parameter dataclass.

A parameter dataclass checks its own fields in a ``validate()`` method, placed right after
its fields, with the functions here. A failed check raises `InvalidParameter`, which names
the field as the dataclass knows it (``discount``); `coach.parameter_tree.validate_parameters`
runs every ``validate()`` of a parameter tree and puts the path from the root in front, so
that the user reads ``agent.algorithm.discount must be in [0, 1], got 1.5``. A graph runs
them when it is built (`GraphManager.validate`), and the command line before it writes
anything.

A dataclass may also check a combination of its fields (``memory.max_size`` against
``algorithm.batch_size``); the field it names is then a dotted path below it.
"""

from __future__ import annotations

import math
import numbers
import unicodedata
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from coach.core.step_units import StepUnit
from coach.errors import CoachError
from coach.schedules import Schedule


class InvalidParameter(CoachError):
    """A parameter holds a value outside what it allows.

    Args:
        field: The field's name, or a dotted path below the dataclass that checked it.
        requirement: What is allowed, as the rest of a sentence (``must be in [0, 1]``).
        value: What the field holds.
    """

    def __init__(self, field: str, requirement: str, value: Any) -> None:
        super().__init__(f"{field} {requirement}, got {value!r}")
        self.field = field
        self.requirement = requirement
        self.value = value

    def under(self, path: str) -> InvalidParameter:
        """The same error, its field named from further up the tree (``path.field``)."""
        field = f"{path}.{self.field}" if path else self.field
        return InvalidParameter(field, self.requirement, self.value)


@runtime_checkable
class Validated(Protocol):
    """Parameters that check their own values."""

    def validate(self) -> None:
        """Raise `InvalidParameter` for the first value that cannot work."""


@runtime_checkable
class Buildable(Protocol):
    """Parameters that build their component (an exploration policy, a memory)."""

    def build(self, *args: Any, **kwargs: Any) -> Any:
        """The component."""


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _interval(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f"{'<' if high_open else '<='} {high:g}"
    return "a finite number"


def _inside(
    value: float, low: float | None, high: float | None, low_open: bool, high_open: bool
) -> bool:
    if not math.isfinite(value):
        return False
    if low is not None and (value <= low if low_open else value < low):
        return False
    return high is None or (value < high if high_open else value <= high)


def number(
    field: str,
    value: Any,
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
    why: str = "",
) -> None:
    """A finite number within the bounds given (closed unless ``low_open``/``high_open``).

    ``why`` is added to the message in parentheses.
    """
    if not (_is_number(value) and _inside(value, low, high, low_open, high_open)):
        requirement = f"must be {_interval(low, high, low_open, high_open)}"
        raise InvalidParameter(field, requirement + (f" ({why})" if why else ""), value)


def whole(field: str, value: Any, minimum: int, *, why: str = "") -> None:
    """A whole number of at least ``minimum``."""
    integral = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if not (integral and int(value) >= minimum):
        raise InvalidParameter(
            field, f"must be a whole number >= {minimum}" + (f" ({why})" if why else ""), value
        )


def one_of(field: str, value: Any, choices: Sequence[Any]) -> None:
    """One of ``choices``."""
    if value not in choices:
        raise InvalidParameter(field, f"must be one of {', '.join(map(repr, choices))}", value)


def name(field: str, value: Any) -> None:
    """A non-empty string (a key, a name)."""
    if not (isinstance(value, str) and value):
        raise InvalidParameter(field, "must be a non-empty string", value)


def file_name(field: str, value: Any) -> None:
    """A name that is also a file name: not empty, no path separators or control
    characters, not ``.`` or ``..``."""
    name(field, value)
    if value in (".", "..") or any(
        c in "/\\" or unicodedata.category(c).startswith("C") for c in value
    ):
        raise InvalidParameter(
            field, "must be a file name (no '/', '\\' or control characters)", value
        )


def steps(
    field: str,
    value: Any,
    kinds: tuple[type[StepUnit], ...],
    minimum: int,
    *,
    why: str = "",
) -> None:
    """A step unit of one of ``kinds`` with at least ``minimum`` steps."""
    *others, last = [kind.__name__ for kind in kinds]
    names = f"{', '.join(others)} or {last}" if others else last
    if not isinstance(value, kinds):
        raise InvalidParameter(
            field, f"must be counted in {names}" + (f" ({why})" if why else ""), value
        )
    if value.num_steps < minimum:
        requirement = "must be > 0 steps" if minimum == 1 else f"must be >= {minimum} steps"
        raise InvalidParameter(field, requirement + (f" ({why})" if why else ""), value)


def schedule(
    field: str,
    value: Any,
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
) -> None:
    """A `Schedule` whose values stay within the bounds (where the schedule tells them)."""
    if not isinstance(value, Schedule):
        raise InvalidParameter(field, "must be a schedule (ConstantSchedule(...), ...)", value)
    bounds = value.bounds()
    if bounds is None:  # a schedule of an extension, which does not tell its range
        return
    if not all(_inside(v, low, high, low_open, False) for v in bounds):
        interval = _interval(low, high, low_open, False)
        raise InvalidParameter(field, f"must take values {interval}", value)


def component(field: str, value: Any, example: str, *, optional: bool = True) -> None:
    """The parameters that build the component ``field`` names (``None`` too, when
    ``optional``); ``example`` shows some: ``EGreedyParameters()``."""
    if value is None and optional:
        return
    if not isinstance(value, Buildable) or isinstance(value, type):
        kind = f"{field} parameters such as {example}" + (" or None" if optional else "")
        raise InvalidParameter(field, f"must be {kind}", value)


def keys(field: str, value: dict[str, Any], required: Sequence[str]) -> None:
    """A dictionary that holds every key of ``required`` (the networks an agent reads)."""
    missing = [key for key in required if key not in value]
    if missing:
        raise InvalidParameter(
            field, f"must hold {', '.join(map(repr, required))} (missing {missing})", sorted(value)
        )
