"""Golden runs: every preset that declares `validation` trains within its budgets, and its
best agent, evaluated afresh, keeps its promise.

    make golden     (or: python -m tests.learning.golden [--jobs N] [--seeds S ...]
                         [--runs DIR] [PRESET ...])

The presets are the shipped ones and those a guide page ships (`tests.learning.guide`: the
agents of "Writing your own agent", trained from the page's own blocks); a guide preset is
named by its file's stem (``CartPole_MunchausenDQN``). Runs the (preset, seed) cases
several at once, one process each, up to the number of cores.
The datasets of the batch presets are made first, by their recipes, where Minari's local
root (``$MINARI_DATASETS_PATH``, default ``~/.minari/datasets``) does not hold them yet.
A case trains until its budgets are spent (every one the validation declares: env steps,
training episodes, epochs over a dataset) or its preset's schedule ends. It passes when

- an evaluation within every budget reached the threshold (for a ceiling: no evaluation
  within the budgets broke it), and
- the run's ``checkpoints/best.pt`` as it was after its best evaluation within the budgets
  (the run goes on to its first evaluation past them, which may write best.pt again; the
  runner keeps the earlier one aside as ``golden-best.pt``), loaded into a freshly built
  graph of the preset and evaluated on 20 fresh episodes with a seed of its own, meets the
  threshold too (averages at least the reward, reaches the success rate; for a ceiling,
  stays below it): one lucky evaluation is not enough, and
- the final agent (the run's last checkpoint), evaluated the same way, meets it as well: a
  run that peaks and then collapses fails.

The table shows the best evaluation, best.pt and the final agent. Exits 1 if any case fails.

Cases longer than a sitting (Atari_DQN trains 1M steps) run with ``--runs DIR``: each case
keeps its folder there and saves a checkpoint every half hour, replay memory included; the
same command again resumes the unfinished cases exactly where their checkpoints left them and
reports the finished ones without training them again (a finished case keeps its final
checkpoint only). Ctrl-C (or SIGTERM) then stops the running cases after their current step
with a checkpoint each, starts no other, and exits 130 (143): nothing trained is lost. A
dataset's recipe it interrupts is killed, and made again by the next run.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path

from coach.batch.graph_manager import BatchRLGraphManager
from coach.batch.ids import local_dataset
from coach.errors import RunInterrupted, on_stop_signals
from coach.presets import list_presets, load_preset
from tests.learning.golden_case import (
    CHECKPOINT_SECONDS,
    EPISODES,
    GoldenResult,
    make_dataset,
    run_case,
    stop_on_signals,
    unrunnable,
)
from tests.learning.guide import guide_presets, is_guide_preset


def missing_datasets(names: list[str]) -> dict[str, str]:
    """The datasets the batch presets among ``names`` learn from that are not made yet
    (not under Minari's local root), each with the recipe that makes it."""
    missing = {}
    for name in names:
        graph = load_preset(name).graph_manager
        if isinstance(graph, BatchRLGraphManager):
            params = graph.batch_params
            if params.dataset_recipe and local_dataset(params.dataset) is None:
                missing[params.dataset] = params.dataset_recipe
    return missing


def resolve(name: str) -> str:
    """What `load_preset` loads for a preset named on the command line: a guide's preset
    (by its stem) as its file in the guide's folder, anything else as given."""
    return guide_presets().get(name, name) if name not in list_presets() else name


def label(name: str) -> str:
    """A case's preset as the table names it: a guide's preset by its stem."""
    return Path(name).stem if is_guide_preset(name) else name


def cases(names: list[str] | None = None, seeds: list[int] | None = None) -> list[tuple[str, int]]:
    """Every (preset, seed) a validation asks for (only ``seeds`` of them, if given): of the
    presets ``names`` (`resolve`), or of every shipped and guide preset."""
    out = []
    every = [*list_presets(), *guide_presets().values()]
    for name in [resolve(n) for n in names] if names else every:
        validation = load_preset(name).validation
        if validation is not None:
            out += [(name, s) for s in validation.seeds if seeds is None or s in seeds]
    return out


def _figure(value: float | None, threshold: str) -> str:
    """A case's score as the table shows it: a success rate to two decimals (one would show
    0.85 as 0.8, at a threshold of 0.8 it looks like), a reward to one."""
    if value is None or math.isnan(value):
        return "-"
    return f"{value:.2f}" if threshold.startswith("success") else f"{value:.1f}"


def table(results: list[GoldenResult]) -> list[str]:
    """The golden table's lines: a row per case, then why each failure failed."""
    lines = [
        f"{'preset':<28} {'seed':>4} {'threshold':>12} {'reached at':>10} {'seconds':>7} "
        f"{'best eval':>9} {f'best.pt {EPISODES} eps':>16} {f'final {EPISODES} eps':>14}  result"
    ]
    for r in results:
        at = f"{r.reached_at:,}" if r.reached_at is not None else "-"
        seconds = f"{r.seconds:.0f}" if r.seconds is not None else "-"
        lines.append(
            f"{label(r.preset):<28} {r.seed:>4} {r.threshold:>12} {at:>10} {seconds:>7} "
            f"{_figure(r.best, r.threshold):>9} {_figure(r.best_checkpoint, r.threshold):>16} "
            f"{_figure(r.final, r.threshold):>14}  "
            f"{'pass' if r.passed else 'FAIL'}"
        )
    lines += [f"{label(r.preset)} seed {r.seed}: {r.why}" for r in results if not r.passed]
    lines += [
        f"{label(r.preset)} seed {r.seed} baselines: {r.baselines}" for r in results if r.baselines
    ]
    return lines


def case_name(name: str) -> str:
    """A preset's name in the runs folder: a shipped preset's own name, a file's stem."""
    return Path(name).stem


def finished(
    pool: Executor,
    todo: list[tuple[str, int]],
    runs: Path | None,
    workers: int | None = None,
    backend: str = "local",
    checkpoint_seconds: float = CHECKPOINT_SECONDS,
    stopped: Callable[[], int | None] = lambda: None,
    threads: int = 1,
) -> Iterator[GoldenResult]:
    """Run the (preset, seed) cases in ``pool`` (each kept in ``runs/PRESET/seedN`` when
    ``runs`` is given) and yield each result as its case ends; a case that raises fails alone,
    with its reason. None starts once ``stopped`` tells a signal came (`forwarding_stops`)."""
    if stopped() is not None:
        for name, seed in todo:
            yield unrunnable(name, seed, RuntimeError("interrupted before it started"))
        return
    futures = {
        pool.submit(
            run_case,
            name,
            seed,
            workers,
            backend,
            runs / case_name(name) / f"seed{seed}" if runs else None,
            checkpoint_seconds,
            threads,
        ): (name, seed)
        for name, seed in todo
    }
    for future in as_completed(futures):
        try:
            yield future.result()
        except RunInterrupted:
            why = RuntimeError("interrupted; the same command resumes it from its checkpoint")
            yield unrunnable(*futures[future], why)
        except Exception as error:
            yield unrunnable(*futures[future], error)


@contextlib.contextmanager
def forwarding_stops() -> Iterator[Callable[[], int | None]]:
    """Within: SIGINT and SIGTERM do not stop this runner but reach its pool's processes,
    where a kept case stops with a checkpoint and no other starts (`run_case`); the runner
    collects what they report and ends. Yields what tells the signal that came, if one did."""
    came: list[int] = []

    def forward(signum: int, frame: object) -> None:
        came.append(signum)
        for child in multiprocessing.active_children():
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signum)  # type: ignore[arg-type]

    with on_stop_signals(forward):
        yield lambda: came[0] if came else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("presets", nargs="*", help="presets to run (default: all with validation)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="cases at once")
    parser.add_argument(
        "--threads", type=int, default=1, help="torch CPU threads of each case (coach --threads)"
    )
    parser.add_argument("-n", "--num-workers", type=int, help="run each case on N rollout workers")
    parser.add_argument("--backend", choices=["local", "ray"], default="local")
    parser.add_argument(
        "--seeds", type=int, nargs="+", help="only these of the seeds each validation names"
    )
    parser.add_argument(
        "--runs",
        type=Path,
        metavar="DIR",
        help="keep each case's run in DIR/PRESET/seedN: an interrupted case resumes from its "
        "latest checkpoint, a finished one is reported without running again",
    )
    parser.add_argument(
        "--checkpoint-seconds",
        type=float,
        default=CHECKPOINT_SECONDS,
        help="with --runs: seconds between the checkpoints a case resumes from",
    )
    args = parser.parse_args()
    todo = cases(args.presets, args.seeds)
    started = time.perf_counter()
    results = []
    with contextlib.ExitStack() as stack:
        pool = stack.enter_context(
            ProcessPoolExecutor(
                args.jobs,
                mp_context=get_context("spawn"),
                initializer=stop_on_signals if args.runs else None,
            )
        )
        # Kept cases stop with a checkpoint on a signal (entered last: left first, before
        # the pool's processes are joined); cases in temporary folders just stop.
        stopped = stack.enter_context(forwarding_stops()) if args.runs else lambda: None
        # The batch presets' datasets first: made by their recipes where they are missing.
        recipes = missing_datasets(sorted({name for name, _ in todo}))
        made = {pool.submit(make_dataset, recipe): dataset for dataset, recipe in recipes.items()}
        for future in as_completed(made):
            error = future.result()
            outcome = f"could not be made: {error}" if error else "made by its recipe"
            print(f"dataset {made[future]}: {outcome}", flush=True)
        for r in finished(
            pool,
            todo,
            args.runs,
            args.num_workers,
            args.backend,
            args.checkpoint_seconds,
            stopped,
            args.threads,
        ):
            results.append(r)
            state = "pass" if r.passed else f"FAIL ({r.why})"
            reached = (
                f"reached {r.threshold} at {r.reached_at:,} env steps ({r.seconds:.0f} s)"
                if r.reached_at is not None and r.seconds is not None
                else f"never reached {r.threshold}"
            )
            print(
                f"{label(r.preset)} seed {r.seed}: {state}; {reached}; "
                f"best eval {_figure(r.best, r.threshold)}, "
                f"best.pt {_figure(r.best_checkpoint, r.threshold)}, "
                f"final {_figure(r.final, r.threshold)} ({len(results)}/{len(todo)})",
                flush=True,
            )
    results.sort(key=lambda r: (r.preset, r.seed))
    print("\n" + "\n".join(table(results)))
    failed = sum(not r.passed for r in results)
    print(f"\n{len(results) - failed} passed, {failed} failed "
          f"({time.perf_counter() - started:.0f} s with {args.jobs} jobs)")  # fmt: skip
    workers = f" -n {args.num_workers} --backend {args.backend}" if args.num_workers else ""
    workers += f" --seeds {' '.join(map(str, args.seeds))}" if args.seeds else ""
    workers += f" --runs {args.runs}" if args.runs else ""
    # The presets first: after --seeds, argparse would read them as more seeds.
    print(
        f"reproduce: python -m tests.learning.golden {' '.join(args.presets)} "
        f"--jobs {args.jobs}{workers}"
    )
    signum = stopped()
    if signum is not None:
        print(f"interrupted by signal {signum}: the same command resumes the cases it stopped")
        return 128 + signum
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
