"""Golden runs as tests: each preset reaches its own validation reward within its budgets,
and its best.pt keeps it on fresh episodes.

Slow (minutes per preset and seed): marked ``learning``, out of the default run. The cases
are the shipped presets' and the guide's (`tests.learning.guide`), named by preset and seed. ``make
golden`` runs the same cases in parallel and prints a table (tests/learning/golden.py).
"""

from __future__ import annotations

import pytest

from tests.learning.golden import cases, label, table
from tests.learning.golden_case import run_case

CASES = cases()


@pytest.mark.learning
@pytest.mark.parametrize(("name", "seed"), CASES, ids=[f"{label(n)}-{s}" for n, s in CASES])
def test_preset_reaches_its_reward(name: str, seed: int) -> None:
    result = run_case(name, seed)
    print("\n" + "\n".join(table([result])))
    assert result.passed, f"{name} seed {seed}: {result.why}"
