"""Golden runs as tests: each preset reaches its own validation reward within its budgets,
and its best.pt keeps it on fresh episodes.

Slow (minutes per preset and seed): marked ``learning``, out of the default run. ``make
golden`` runs the same cases in parallel and prints a table (tests/learning/golden.py).
"""

from __future__ import annotations

import pytest

from tests.learning.golden import cases, table
from tests.learning.golden_case import run_case


@pytest.mark.learning
@pytest.mark.parametrize(("name", "seed"), cases())
def test_preset_reaches_its_reward(name: str, seed: int) -> None:
    result = run_case(name, seed)
    print("\n" + "\n".join(table([result])))
    assert result.passed, f"{name} seed {seed}: {result.why}"
