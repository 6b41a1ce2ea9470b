"""The seeds of a group on the command line: ``--seeds 0-4``, ``0,3,7``, ``0-2,9``."""

from __future__ import annotations

import click
import pytest

from coach.cli_options import MAX_SEEDS, Seeds


def parse(text: str) -> tuple[int, ...]:
    return Seeds().convert(text, None, None)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("text", "seeds"),
    [
        ("0-4", (0, 1, 2, 3, 4)),
        ("0,3,7", (0, 3, 7)),
        ("0-2,9", (0, 1, 2, 9)),
        (" 5 ", (5,)),
        ("7,1-2", (7, 1, 2)),
        ("4294967295", (4294967295,)),
        (f"0-{MAX_SEEDS - 1}", tuple(range(MAX_SEEDS))),
    ],
)
def test_ranges_and_lists(text: str, seeds: tuple[int, ...]) -> None:
    assert parse(text) == seeds


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "is not a list of seeds"),
        ("a", "is not a list of seeds"),
        ("0-", "is not a list of seeds"),
        ("1,,2", "is not a list of seeds"),
        ("1.5", "is not a list of seeds"),
        ("4-0", "'4-0' is a range from high to low"),
        ("-1", "is not a list of seeds"),
        ("0-4294967296", "outside the seeds 0 to 4294967295"),
        (f"0-{MAX_SEEDS}", f"is more than {MAX_SEEDS} seeds"),
        ("0-3,2", "names seed 2 twice"),
    ],
)
def test_refusals(text: str, message: str) -> None:
    with pytest.raises(click.BadParameter, match=message):
        parse(text)
