"""The documentation's benchmark records: a preset's kept runs drawn through ``coach plot``'s
code into a figure, and their figures per seed into ``results.json``."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from benchmarks.learning_curves import metric, record
from tests.integration.coach_cli import SMALL, coach
from tests.learning.golden_case import RESULT, GoldenResult


def test_a_preset_whose_seeds_finished_is_drawn_and_recorded(tmp_path: Path) -> None:
    runs, docs = tmp_path / "runs", tmp_path / "docs"
    results = []
    for seed in (0, 1):
        done = coach("-p", "CartPole_DQN", "--seed", str(seed), "-e", "x", *SMALL, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        (made,) = list((tmp_path / "experiments" / "x").iterdir())
        folder = runs / "CartPole_DQN" / f"seed{seed}"
        folder.parent.mkdir(parents=True, exist_ok=True)
        made.rename(folder)
        (tmp_path / "experiments" / "x").rmdir()
        result = GoldenResult("CartPole_DQN", seed, "475", None, None, 9.5, 9.0, 8.5, False, "no")
        (folder / RESULT).write_text(json.dumps(asdict(result)))
        results.append(result)
    args = argparse.Namespace(runs=runs, docs=docs, seeds=[0, 1], jobs=1)
    record("CartPole_DQN", results, args)
    figure = docs / "figures" / "CartPole_DQN.png"
    assert figure.read_bytes().startswith(b"\x89PNG")
    entry = json.loads((docs / "results.json").read_text())["CartPole_DQN"]
    assert entry["figure"] == "figures/CartPole_DQN.png" and entry["metric"] == "reward"
    assert [s["seed"] for s in entry["seeds"]] == [0, 1]
    assert entry["seeds"][1]["best_checkpoint"] == 9.0
    assert entry["command"].endswith("CartPole_DQN --seeds 0 1")
    assert metric("ExplorationChain_DQN") == "success_rate"
