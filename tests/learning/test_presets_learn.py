"""Golden runs: each preset reaches its own validation reward within its own budget.

Slow (minutes per preset and seed): marked ``learning``, out of the default run.
Run them with ``make golden``.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from coach.graph_managers.parameters import RunContext
from coach.presets import list_presets, load_preset


def cases() -> list[tuple[str, int]]:
    out = []
    for name in list_presets():
        validation = load_preset(name).validation
        if validation is not None:
            out += [(name, seed) for seed in validation.seeds]
    return out


@pytest.mark.learning
@pytest.mark.parametrize(("name", "seed"), cases())
def test_preset_reaches_its_reward(name: str, seed: int, tmp_path: Path) -> None:
    preset = load_preset(name)
    validation = preset.validation
    assert validation is not None
    graph = preset.graph_manager.create_graph(
        RunContext(seed=seed, experiment_dir=tmp_path, quiet=True)
    )
    start = time.perf_counter()
    try:
        graph.improve()
    finally:
        graph.close()
    seconds = time.perf_counter() - start
    reached = [
        e
        for e in graph.evaluations
        if e.mean_reward >= validation.min_reward
        and (validation.max_env_steps is None or e.env_steps <= validation.max_env_steps)
    ]
    curve = ", ".join(f"{e.env_steps}:{e.mean_reward:.0f}" for e in graph.evaluations)
    print(f"\n{name} seed {seed}: {seconds:.0f}s; evaluations (env steps:mean reward): {curve}")
    assert reached, (
        f"{name} seed {seed} never reached {validation.min_reward} within "
        f"{validation.max_env_steps} env steps: {curve}"
    )
    print(f"{name} seed {seed}: reached {reached[0].mean_reward:.1f} at {reached[0].env_steps}")
