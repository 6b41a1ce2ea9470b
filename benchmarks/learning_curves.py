"""The documentation's benchmark figures: every preset with a validation trained on several
seeds, as `make golden` trains it, and drawn through ``coach plot``.

    make benchmarks-docs   (or: python -m benchmarks.learning_curves [PRESET ...]
                                 [--seeds S ...] [--jobs N] [--runs DIR] [--docs DIR])

Each (preset, seed) case trains within its validation's budgets and is judged the golden way
(`tests.learning.golden_case.run_case`), kept in ``--runs`` (``experiments/benchmarks`` by
default): a finished case is read back instead of trained again, an interrupted one resumes
from its checkpoint (Ctrl-C or SIGTERM stops the running cases with a checkpoint each). Then,
for every preset whose seeds have all finished, it writes under ``--docs``
(``docs/benchmarks``), under the preset's name (a preset file's stem):

- ``figures/PRESET.png``: the evaluation curve over the seeds, its 95% bootstrap band and the
  validation's threshold (`coach.cli_plot.plot_runs`, what ``coach plot`` draws); for a
  relative promise, the mean of the floors its seeds were judged against;
- its entry in ``results.json``: per seed, the env steps and wall time to the threshold, the
  best evaluation, ``best.pt`` and the final agent on 20 fresh episodes; the command that
  reproduces it, the commits and the last date its seeds were recorded at.

The documentation's benchmark pages are built from these two, so the site shows real runs
without running anything. Presets that were not run keep their earlier entries.

Each finished case is also recorded under ``--docs`` in ``runs/PRESET/seedN``: its
``params.yaml``, its evaluations (the evaluation rows of ``progress.csv``), its verdict and
its marks, a few kilobytes, committed with the figures. A case recorded there is read back
instead of trained, whatever ``--runs`` holds: a preset's seeds may finish on different days
or machines (the long presets take longer per seed than a working session), and a figure can
be drawn again without training (``coach plot docs/benchmarks/runs/PRESET``). A record made
with other parameters than its preset has now (its ``params.yaml``) is trained again.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from datetime import UTC, datetime
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from coach.experiment import write_params
from coach.graph_managers.run_state import describe_changes
from coach.presets import list_presets, load_preset
from tests.learning import baselines
from tests.learning.golden import (
    case_name,
    finished,
    forwarding_stops,
    missing_datasets,
)
from tests.learning.golden_case import (
    MARKS,
    RESULT,
    GoldenResult,
    changed_since,
    make_dataset,
    stop_on_signals,
)

SEEDS = (0, 1, 2)
RESULTS = "results.json"
RECORDS = "runs"
"""Under ``--docs``: each finished case's record, by preset and seed."""
RECORDED = "recorded.json"
"""A record's commit and date."""


def keep(name: str, folder: Path, kept: Path) -> None:
    """Record a finished case kept in ``folder`` into ``kept``: what reading it back and
    drawing it need, and when and from which commit it was recorded."""
    seed = int(folder.name.removeprefix("seed"))
    if not (folder / "params.yaml").is_file():  # kept by golden before it wrote one
        write_params(folder / "params.yaml", load_preset(name), seed, [])
    kept.mkdir(parents=True, exist_ok=True)
    with open(folder / "progress.csv", newline="") as source:
        reader = csv.DictReader(source)
        assert reader.fieldnames is not None, f"{folder}: an empty progress.csv"
        rows = [row for row in reader if row["phase"] == "evaluate"]
    partial = kept / "progress.csv.partial"
    with open(partial, "w", newline="") as target:
        writer = csv.DictWriter(target, reader.fieldnames)
        writer.writeheader()
        writer.writerows(rows)
    partial.replace(kept / "progress.csv")
    for file in ("params.yaml", MARKS):
        if (folder / file).is_file():  # marks: none before a case's first evaluation
            shutil.copyfile(folder / file, kept / file)
    # Read back and kept again (its verdict is the record's): recorded when and where it was.
    read_back = (kept / RESULT).is_file() and (
        (kept / RESULT).read_bytes() == (folder / RESULT).read_bytes()
    )
    if not read_back or not (kept / RECORDED).is_file():
        when = {"commit": commit(), "date": datetime.now(UTC).strftime("%Y-%m-%d")}
        (kept / RECORDED).write_text(json.dumps(when) + "\n")
    shutil.copyfile(folder / RESULT, kept / RESULT)  # last: a record is whole once it has it


def restore(name: str, kept: Path, folder: Path) -> None:
    """Put the recorded case of preset ``name`` into ``folder``, where it is read back
    instead of trained; not a record made with other parameters than the preset has now,
    which is trained again (and recorded anew)."""
    if not (kept / RESULT).is_file() or (folder / RESULT).is_file():
        return
    changes = changed_since(kept, load_preset(name).graph_manager.parameters())
    if changes:
        print(
            f"{name} {folder.name}: recorded with other parameters than the preset has now "
            f"({describe_changes(changes)}): trained again",
            flush=True,
        )
        return
    folder.mkdir(parents=True, exist_ok=True)
    for file in ("params.yaml", "progress.csv", MARKS, RESULT):
        if (kept / file).is_file():
            shutil.copyfile(kept / file, folder / file)


def presets_with_validation(names: list[str] | None) -> list[str]:
    """``names``, or every preset, less those that declare no validation."""
    return [n for n in names or list_presets() if load_preset(n).validation is not None]


def metric(name: str) -> str:
    """What a preset's curve shows: its success rate when its validation promises one."""
    validation = load_preset(name).validation
    assert validation is not None
    rated = validation.min_success_rate is not None or validation.max_success_rate is not None
    return "success_rate" if rated else "reward"


def total_seconds(folder: Path) -> float | None:
    """The wall time of a kept case up to its last evaluation (its marks' last entry)."""
    marks = folder / MARKS
    if not marks.is_file():
        return None
    entries = json.loads(marks.read_text())
    return float(entries[-1][1]) if entries else None


def floors(name: str, seeds: list[int]) -> dict[str, float]:
    """A relative promise's line: the mean of the floors golden sets on ``seeds`` from the
    baselines it measures on each (`tests.learning.baselines`); nothing for a promise with a
    threshold of its own."""
    preset = load_preset(name)
    validation = preset.validation
    assert validation is not None
    if validation.gap_closed is None:
        return {}
    resolved = []
    for seed in seeds:
        floor = baselines.resolve(name, validation, seed)[0].min_reward
        assert floor is not None, f"{name}: golden set no floor on seed {seed}"
        resolved.append(floor)
    return {preset.name: statistics.fmean(resolved)}


def draw(name: str, folders: list[Path], figure: Path) -> None:
    """The preset's curve over its seeds' runs, drawn by ``coach plot``'s own code."""
    from coach.cli_plot import plot_runs

    seeds = [int(folder.name.removeprefix("seed")) for folder in folders]
    with tempfile.TemporaryDirectory(prefix="coach-bench-plot-") as scratch:
        written = plot_runs(folders, Path(scratch), "env_steps", metric(name), floors(name, seeds))
        curves = [p for p in written if p.suffix == ".png" and p.stem != "final_performance"]
        assert len(curves) == 1, f"{name}: expected one figure, got {curves}"
        figure.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(curves[0], figure)


def commit() -> str:
    """The checked-out commit, with ``+`` when the worktree has changes."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        return "unknown"
    return head + ("+" if dirty else "") if head else "unknown"


def entry(
    name: str,
    results: list[GoldenResult],
    runs: Path,
    records: Path,
    seeds: list[int],
    threads: int = 1,
) -> dict[str, Any]:
    """A preset's record in ``results.json``."""
    preset = load_preset(name)
    validation = preset.validation
    assert validation is not None
    rows: list[dict[str, Any]] = []
    commits, dates = set(), set()
    for r in sorted(results, key=lambda r: r.seed):
        row = asdict(r)
        row["total_seconds"] = total_seconds(runs / case_name(name) / f"seed{r.seed}")
        rows.append({k: v for k, v in row.items() if k not in ("preset", "threshold")})
        recorded = records / case_name(name) / f"seed{r.seed}" / RECORDED
        when = json.loads(recorded.read_text()) if recorded.is_file() else {}
        commits.add(when.get("commit", commit()))
        dates.add(when.get("date", datetime.now(UTC).strftime("%Y-%m-%d")))
    return {
        "threshold": validation.describe(),
        "metric": metric(name),
        "validation_seeds": list(validation.seeds),
        "figure": f"figures/{case_name(name)}.png",
        "command": f"python -m benchmarks.learning_curves {name} --seeds "
        + " ".join(map(str, seeds))
        + (f" --threads {threads}" if threads != 1 else ""),
        "commit": ", ".join(sorted(commits)),
        "date": max(dates),
        "seeds": rows,
    }


def record(name: str, results: list[GoldenResult], args: argparse.Namespace) -> None:
    """Draw a preset whose seeds have all finished and write its entry into results.json."""
    if not all(r.ran for r in results):
        print(f"{name}: not drawn, a case did not run", flush=True)
        return
    folders = [args.runs / case_name(name) / f"seed{r.seed}" for r in results]
    figure = args.docs / "figures" / f"{case_name(name)}.png"
    draw(name, folders, figure)
    path = args.docs / RESULTS
    recorded = json.loads(path.read_text()) if path.is_file() else {}
    recorded[case_name(name)] = entry(
        name, results, args.runs, args.docs / RECORDS, args.seeds, args.threads
    )
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(dict(sorted(recorded.items())), indent=1) + "\n")
    partial.replace(path)
    print(f"{case_name(name)}: {figure}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "presets",
        nargs="*",
        help="preset names or preset files to run (default: every preset with a validation)",
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="cases at once")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch CPU threads of each case (coach --threads): one case on every core of a "
        "small machine, for a preset that trains for hours per seed",
    )
    parser.add_argument("--runs", type=Path, default=Path("experiments/benchmarks"))
    parser.add_argument("--docs", type=Path, default=Path("docs/benchmarks"))
    args = parser.parse_args()
    names = presets_with_validation(args.presets)
    todo = [(name, seed) for name in names for seed in args.seeds]
    started = time.perf_counter()
    by_preset: dict[str, list[GoldenResult]] = {name: [] for name in names}
    for name, seed in todo:
        case = Path(case_name(name)) / f"seed{seed}"
        restore(name, args.docs / RECORDS / case, args.runs / case)
    with (
        ProcessPoolExecutor(
            args.jobs, mp_context=get_context("spawn"), initializer=stop_on_signals
        ) as pool,
        forwarding_stops() as stopped,
    ):
        for dataset, recipe in missing_datasets(names).items():
            error = pool.submit(make_dataset, recipe).result()
            print(f"dataset {dataset}: {error or 'made by its recipe'}", flush=True)
        for r in finished(pool, todo, args.runs, stopped=stopped, threads=args.threads):
            by_preset[r.preset].append(r)
            if r.ran:
                case = Path(case_name(r.preset)) / f"seed{r.seed}"
                keep(r.preset, args.runs / case, args.docs / RECORDS / case)
                at = f"{r.reached_at:,} env steps" if r.reached_at is not None else "never"
                print(f"{r.preset} seed {r.seed}: threshold reached at {at}", flush=True)
            else:
                print(f"{r.preset} seed {r.seed}: {r.why}", flush=True)
            if len(by_preset[r.preset]) == len(args.seeds):  # drawn as soon as it is whole
                record(r.preset, by_preset[r.preset], args)
    print(f"{len(todo)} cases, {time.perf_counter() - started:.0f} s with {args.jobs} jobs")
    signum = stopped()
    if signum is not None:
        print(f"interrupted by signal {signum}: the same command resumes the cases it stopped")
        return 128 + signum
    return 0


if __name__ == "__main__":
    sys.exit(main())
