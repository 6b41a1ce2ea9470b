"""Fingerprints of every preset's numbers: whether a change of Coach's code changed what a
preset computes.

``python -m tests.fingerprints --out FILE`` runs each shipped preset (the budgets of
tests/presets/test_every_preset_runs.py: 100 env steps of heatup, 200 of training, two
evaluations) on seed 0 in this process and writes, per preset, a hash of its progress rows
(every column but the wall-clock time) and of its agents' networks, optimizers and acting
state after the run. Run it on two commits and compare the files with ``--compare A B``: a
change that should leave every preset's numbers alone leaves every fingerprint alone.

The asynchronous presets (Hogwild! workers: their interleaving is the scheduler's) have no
fingerprint.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch


def _digest(value: Any, hasher: Any) -> None:
    """Feed ``value`` (a state dict's tree) into ``hasher``, in key order."""
    if isinstance(value, dict):
        for key in sorted(value, key=str):
            hasher.update(str(key).encode())
            _digest(value[key], hasher)
    elif isinstance(value, list | tuple):
        for item in value:
            _digest(item, hasher)
    elif isinstance(value, torch.Tensor):
        hasher.update(value.detach().cpu().contiguous().numpy().tobytes())
    elif isinstance(value, np.ndarray):
        hasher.update(np.ascontiguousarray(value).tobytes())
    else:
        hasher.update(repr(value).encode())


def fingerprint(name: str, folder: Path) -> dict[str, str]:
    """The hashes of a short run of preset ``name`` on seed 0."""
    from coach.batch.graph_manager import BatchRLGraphManager
    from coach.environments.atari import AtariEnvironmentParameters
    from coach.graph_managers.parameters import RunContext
    from coach.parameters import set_parameter
    from coach.presets import load_preset
    from tests.presets.test_every_preset_runs import TINY, TRAINING

    preset = load_preset(name)
    graph = preset.graph_manager
    roots = graph.parameters()
    if isinstance(graph, BatchRLGraphManager):
        from benchmarks.batch_rl import record_random_dataset

        os.environ["MINARI_DATASETS_PATH"] = str(folder / "minari")  # presets share dataset names

        record_random_dataset(graph, 600)
        set_parameter(roots, "schedule.improve_steps", "Epochs(1)")
        set_parameter(roots, "schedule.evaluation_steps", "EnvironmentEpisodes(1)")
    else:
        for path, value in {**TINY, **TRAINING.get(name, {})}.items():
            set_parameter(roots, path, value)
    if isinstance(roots.get("environment"), AtariEnvironmentParameters):
        # An untrained agent's greedy Breakout episode lasts until sticky actions fire (tens
        # of thousands of steps): its evaluations are counted in steps.
        set_parameter(roots, "schedule.evaluation_steps", "EnvironmentSteps(200)")
    graph.create_graph(RunContext(seed=0, experiment_dir=folder, quiet=True))
    try:
        graph.improve()
        state = graph.state_dict()
    finally:
        graph.close()
    with open(folder / "progress.csv") as f:
        rows = [{k: v for k, v in row.items() if k != "wall_time"} for row in csv.DictReader(f)]
    progress = hashlib.sha256(json.dumps(rows).encode()).hexdigest()
    agents = hashlib.sha256()
    _digest(state["agents"], agents)
    return {"progress": progress, "agents": agents.hexdigest(), "rows": str(len(rows))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="Write the fingerprints (JSON) here.")
    parser.add_argument("--presets", nargs="*", help="Only these presets.")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"))
    args = parser.parse_args()
    if args.compare:
        a, b = (json.loads(p.read_text()) for p in args.compare)
        differ = sorted(n for n in set(a) & set(b) if a[n] != b[n])
        print(f"{len(set(a) & set(b))} presets in both, {len(differ)} differ: {differ}")
        return 1 if differ else 0
    from coach.parallel.asynchronous import AsynchronousGraphManager
    from coach.presets import list_presets, load_preset

    torch.set_num_threads(1)
    names = args.presets or [
        n
        for n in list_presets()
        if not isinstance(load_preset(n).graph_manager, AsynchronousGraphManager)
    ]
    prints: dict[str, dict[str, str]] = {}
    for name in names:
        start = time.monotonic()
        with tempfile.TemporaryDirectory() as scratch:
            prints[name] = fingerprint(name, Path(scratch))
        print(f"{name}: {prints[name]} ({time.monotonic() - start:.1f} s)", flush=True)
    if args.out:
        args.out.write_text(json.dumps(prints, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
