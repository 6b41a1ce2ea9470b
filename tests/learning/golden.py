"""Golden runs: every preset that declares `validation` trains until it reaches its reward.

    make golden              (or: python -m tests.learning.golden [--jobs N] [PRESET ...])

Runs the (preset, seed) cases several at once, one process each, up to the number of cores,
and prints a table: the threshold, the env steps and wall time at which the evaluation mean
first reached it, and pass or FAIL (not reached within the preset's budget). Exits 1 if any
case fails.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

from coach.graph_managers.evaluation import EvaluationResult
from coach.graph_managers.parameters import RunContext
from coach.presets import list_presets, load_preset


@dataclass(slots=True)
class GoldenResult:
    preset: str
    seed: int
    threshold: str
    budget: int | None
    reached_at: int | None
    seconds: float | None
    best: float

    @property
    def passed(self) -> bool:
        return self.reached_at is not None and (
            self.budget is None or self.reached_at <= self.budget
        )


def cases(names: list[str] | None = None) -> list[tuple[str, int]]:
    """Every (preset, seed) a validation asks for."""
    out = []
    for name in names or list_presets():
        validation = load_preset(name).validation
        if validation is not None:
            out += [(name, seed) for seed in validation.seeds]
    return out


def run_case(
    name: str, seed: int, workers: int | None = None, backend: str = "local"
) -> GoldenResult:
    """Train ``name`` on ``seed`` until its evaluation mean reaches the validation reward
    (with ``workers`` rollout workers on ``backend``, if given)."""
    preset = load_preset(name)
    validation = preset.validation
    assert validation is not None, f"{name} declares no validation"
    reached: list[tuple[int, float]] = []
    start = time.perf_counter()

    broken: list[int] = []

    def stop_when(result: EvaluationResult) -> bool:
        rate = result.success_rate
        if validation.broken(rate, result.mean_reward):
            broken.append(result.env_steps)
        elif validation.reached(result.mean_reward, rate) and not reached:
            reached.append((result.env_steps, time.perf_counter() - start))
        # Stop once decided, or once past the budget (a preset may train for longer).
        budget = validation.max_env_steps
        return bool(reached or broken) or (budget is not None and result.env_steps >= budget)

    graph = preset.graph_manager
    if workers is not None:
        from coach.parallel.distributed import DistributedGraphManager
        from coach.parallel.parameters import DistributedParameters

        graph = DistributedGraphManager(
            graph, DistributedParameters(num_workers=workers, backend=backend)
        )
    graph.stop_when = stop_when
    with tempfile.TemporaryDirectory() as directory:
        graph.create_graph(RunContext(seed=seed, experiment_dir=Path(directory), quiet=True))
        try:
            graph.improve()
        finally:
            graph.close()
    seconds = time.perf_counter() - start
    if validation.ceiling() and not broken and graph.evaluations:
        # A ceiling holds once the whole budget ran without breaking it.
        reached.append((graph.evaluations[-1].env_steps, seconds))
    rewarded = validation.min_reward is not None or validation.max_reward is not None
    key = "mean_reward" if rewarded else "success_rate"
    best = max((getattr(e, key) for e in graph.evaluations), default=float("nan"))
    return GoldenResult(
        name,
        seed,
        validation.describe(),
        validation.max_env_steps,
        None if broken else (reached[0][0] if reached else None),
        None if broken else (reached[0][1] if reached else None),
        best,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("presets", nargs="*", help="presets to run (default: all with validation)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="cases at once")
    parser.add_argument("-n", "--num-workers", type=int, help="run each case on N rollout workers")
    parser.add_argument("--backend", choices=["local", "ray"], default="local")
    args = parser.parse_args()
    todo = cases(args.presets)
    started = time.perf_counter()
    results = []
    with ProcessPoolExecutor(args.jobs, mp_context=get_context("spawn")) as pool:
        futures = [
            pool.submit(run_case, name, seed, args.num_workers, args.backend) for name, seed in todo
        ]
        for future in as_completed(futures):
            r = future.result()
            results.append(r)
            state = "pass" if r.passed else "FAIL"
            at = f"reached at {r.reached_at:,} env steps, {r.seconds:.0f} s" if r.reached_at else ""
            print(
                f"{r.preset} seed {r.seed}: {state} {at} best {r.best:.1f} "
                f"({len(results)}/{len(todo)})",
                flush=True,
            )
    results.sort(key=lambda r: (r.preset, r.seed))
    print(f"\n{'preset':<28} {'seed':>4} {'threshold':>9} {'budget':>9} {'reached at':>10} "
          f"{'wall time':>9} {'best':>7}  result")  # fmt: skip
    for r in results:
        at = f"{r.reached_at:,}" if r.reached_at is not None else "-"
        seconds = f"{r.seconds:.0f} s" if r.seconds is not None else "-"
        budget = f"{r.budget:,}" if r.budget is not None else "-"
        print(f"{r.preset:<28} {r.seed:>4} {r.threshold:>9} {budget:>9} {at:>10} "
              f"{seconds:>9} {r.best:>7.1f}  {'pass' if r.passed else 'FAIL'}")  # fmt: skip
    failed = sum(not r.passed for r in results)
    print(f"\n{len(results) - failed} passed, {failed} failed "
          f"({time.perf_counter() - started:.0f} s with {args.jobs} jobs)")  # fmt: skip
    workers = f" -n {args.num_workers} --backend {args.backend}" if args.num_workers else ""
    print(
        f"reproduce: python -m tests.learning.golden --jobs {args.jobs}{workers} "
        f"{' '.join(args.presets)}"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
