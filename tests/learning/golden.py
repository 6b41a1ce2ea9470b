"""Golden runs: every preset that declares `validation` trains within its budgets, and its
best agent, evaluated afresh, keeps its promise.

    make golden     (or: python -m tests.learning.golden [--jobs N] [--seeds S ...] [PRESET ...])

Runs the (preset, seed) cases several at once, one process each, up to the number of cores.
The datasets of the batch presets are made first, by their recipes, where Minari's local
root (``$MINARI_DATASETS_PATH``, default ``~/.minari/datasets``) does not hold them yet.
A case trains until its budgets are spent (every one the validation declares: env steps,
training episodes, epochs over a dataset) or its preset's schedule ends. It passes when

- an evaluation within every budget reached the threshold (for a ceiling: no evaluation
  within the budgets broke it), and
- the run's ``checkpoints/best.pt`` (the run after its best evaluation, saved within the
  budgets), loaded into a freshly built graph of the preset and evaluated on 20 fresh
  episodes with a seed of its own, meets the threshold too (averages at least the reward,
  reaches the success rate; for a ceiling, stays below it): one lucky evaluation is not
  enough.

The table also shows the final agent (the run's last checkpoint, evaluated the same way), so
that a run that peaks and then collapses is visible. Exits 1 if any case fails.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from coach.batch.graph_manager import BatchRLGraphManager
from coach.batch.ids import local_dataset
from coach.checkpoints import BEST, load_checkpoint
from coach.core.step_units import EnvironmentEpisodes
from coach.graph_managers.evaluation import EvaluationResult
from coach.graph_managers.graph_manager import GraphManager
from coach.graph_managers.parameters import RunContext
from coach.presets import PresetValidation, list_presets, load_preset

EPISODES = 20
"""Fresh episodes that evaluate best.pt and the final agent."""
SEED_OFFSET = 10_000
"""The fresh evaluations' seed is the training seed plus this: apart from every training
seed a validation names."""


@dataclass(slots=True)
class Spent:
    """What a run has spent, in each unit a validation may budget."""

    env_steps: int
    episodes: int
    epochs: int

    @classmethod
    def of(cls, graph: GraphManager) -> Spent:
        epochs = graph.epoch if isinstance(graph, BatchRLGraphManager) else 0
        return cls(graph.env_steps, graph.training_episodes, epochs)

    def budgets(self, validation: PresetValidation) -> list[tuple[int, int]]:
        """(spent, budget) for each budget the validation declares."""
        pairs = [
            (self.env_steps, validation.max_env_steps),
            (self.episodes, validation.max_episodes),
            (self.epochs, validation.max_epochs),
        ]
        return [(used, budget) for used, budget in pairs if budget is not None]

    def within(self, validation: PresetValidation) -> bool:
        """Within every declared budget."""
        return all(used <= budget for used, budget in self.budgets(validation))

    def exhausted(self, validation: PresetValidation) -> bool:
        """Some declared budget is spent: nothing later counts."""
        return any(used >= budget for used, budget in self.budgets(validation))


def meets(validation: PresetValidation, result: EvaluationResult) -> bool:
    """Whether an evaluation keeps the promise: reaches what it must reach (if anything)
    and breaks no ceiling."""
    rate, mean = result.success_rate, result.mean_reward
    floor = validation.min_reward is not None or validation.min_success_rate is not None
    return (not floor or validation.reached(mean, rate)) and not validation.broken(rate, mean)


def score(validation: PresetValidation, result: EvaluationResult) -> float:
    """What the table shows of an evaluation: its mean reward, or its success rate when the
    validation promises nothing about the reward."""
    rewarded = validation.min_reward is not None or validation.max_reward is not None
    return result.mean_reward if rewarded else result.success_rate


def evaluate_checkpoint(name: str, state: dict[str, Any], seed: int) -> EvaluationResult:
    """``state``'s agents in a freshly built graph of preset ``name``, on `EPISODES` fresh
    episodes seeded with ``seed`` (as ``coach -p NAME -crd PATH --evaluate 20`` does)."""
    graph = load_preset(name).graph_manager
    graph.create_graph(RunContext(seed=seed, quiet=True))
    try:
        graph.load_state_dict(state, whole_run=False)
        return graph.evaluate(EnvironmentEpisodes(EPISODES))
    finally:
        graph.close()


@dataclass(slots=True)
class GoldenResult:
    preset: str
    seed: int
    threshold: str
    reached_at: int | None
    """Env steps of the first evaluation within budget that kept the promise (a ceiling:
    the last evaluation, once the run kept it throughout)."""
    seconds: float | None
    """Wall time to ``reached_at``."""
    best: float
    """The best evaluation within budget (its mean reward, or success rate)."""
    best_checkpoint: float | None
    """best.pt on `EPISODES` fresh episodes; ``None`` without a best.pt."""
    final: float | None
    """The last checkpoint on `EPISODES` fresh episodes."""
    passed: bool
    why: str
    """Why it failed ("" when it passed)."""


def _verdict(
    validation: PresetValidation,
    reached: bool,
    broken: bool,
    best: tuple[bool, EvaluationResult] | None,
) -> str:
    """Why a case fails, or "" when it passes."""
    if broken:
        return "an evaluation within budget broke the ceiling"
    if not reached:
        return "no evaluation within budget reached the threshold"
    if best is None:
        return f"the run wrote no {BEST}"
    within, result = best
    if not within:
        return f"{BEST} is of an evaluation past the budget"
    if not meets(validation, result):
        return f"{BEST} on {EPISODES} fresh episodes does not keep the promise"
    return ""


def run_case(
    name: str, seed: int, workers: int | None = None, backend: str = "local"
) -> GoldenResult:
    """Train ``name`` on ``seed`` within its validation's budgets (with ``workers`` rollout
    workers on ``backend``, if given), then judge the run and its checkpoints."""
    preset = load_preset(name)
    validation = preset.validation
    assert validation is not None, f"{name} declares no validation"
    graph = preset.graph_manager
    if workers is not None:
        from coach.parallel.distributed import DistributedGraphManager
        from coach.parallel.parameters import DistributedParameters

        graph = DistributedGraphManager(
            graph, DistributedParameters(num_workers=workers, backend=backend)
        )
    within: list[bool] = []  # for each evaluation: whether it came within every budget
    reached: tuple[int, float] | None = None
    broken = False
    start = time.perf_counter()

    def stop_when(result: EvaluationResult) -> bool:
        nonlocal reached, broken
        spent = Spent.of(graph)
        within.append(spent.within(validation))
        if within[-1]:
            broken = broken or validation.broken(result.success_rate, result.mean_reward)
            if reached is None and not validation.ceiling() and meets(validation, result):
                reached = (result.env_steps, time.perf_counter() - start)
        # Train to the end of the budgets (a preset may train for longer), so that the
        # final agent shows what became of the best one.
        return broken or spent.exhausted(validation)

    graph.stop_when = stop_when
    with tempfile.TemporaryDirectory() as directory:
        graph.create_graph(RunContext(seed=seed, experiment_dir=Path(directory), quiet=True))
        try:
            graph.improve()
            final_path = graph.save_checkpoint()  # as the CLI's run ends, early stop or not
        finally:
            graph.close()
        evaluations = graph.evaluations
        if validation.ceiling() and not broken and any(within):
            # A ceiling holds once the run kept it within its whole budget.
            last = max(i for i, inside in enumerate(within) if inside)
            reached = (evaluations[last].env_steps, time.perf_counter() - start)
        evaluation_seed = seed + SEED_OFFSET
        best: tuple[bool, EvaluationResult] | None = None
        best_path = Path(directory) / "checkpoints" / BEST
        if best_path.is_file():
            state = load_checkpoint(best_path)
            # best.pt was saved right after the evaluation that made it the best so far.
            index = len(state["evaluations"]) - 1
            best = (within[index], evaluate_checkpoint(name, state, evaluation_seed))
        assert final_path is not None
        final = evaluate_checkpoint(name, load_checkpoint(final_path), evaluation_seed)
    scores = [score(validation, e) for e, inside in zip(evaluations, within, strict=True) if inside]
    why = _verdict(validation, reached is not None, broken, best)
    return GoldenResult(
        preset=name,
        seed=seed,
        threshold=validation.describe(),
        reached_at=reached[0] if reached is not None else None,
        seconds=reached[1] if reached is not None else None,
        best=max((s for s in scores if not math.isnan(s)), default=math.nan),
        best_checkpoint=score(validation, best[1]) if best is not None else None,
        final=score(validation, final),
        passed=not why,
        why=why,
    )


def unrunnable(name: str, seed: int, error: BaseException) -> GoldenResult:
    """The failed result of a case that raised before it could be judged (a batch preset
    whose dataset was never made, say), with the error's first line as the reason."""
    validation = load_preset(name).validation
    first_line = (str(error).splitlines() or [type(error).__name__])[0]
    return GoldenResult(
        preset=name,
        seed=seed,
        threshold=validation.describe() if validation is not None else "-",
        reached_at=None,
        seconds=None,
        best=math.nan,
        best_checkpoint=None,
        final=None,
        passed=False,
        why=f"did not run: {first_line}",
    )


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


def make_dataset(recipe: str) -> str | None:
    """Run a dataset's recipe (its shell commands) in a scratch folder, with this Python's
    ``coach`` first on the PATH; ``None`` when it worked, else the last line it printed."""
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", "")])}
    with tempfile.TemporaryDirectory(prefix="coach-golden-dataset-") as scratch:
        done = subprocess.run(
            ["bash", "-e", "-c", recipe], cwd=scratch, env=env, capture_output=True, text=True
        )
    if done.returncode == 0:
        return None
    lines = (done.stderr + done.stdout).strip().splitlines()
    return lines[-1] if lines else f"exit status {done.returncode}"


def cases(names: list[str] | None = None, seeds: list[int] | None = None) -> list[tuple[str, int]]:
    """Every (preset, seed) a validation asks for (only ``seeds`` of them, if given)."""
    out = []
    for name in names or list_presets():
        validation = load_preset(name).validation
        if validation is not None:
            out += [(name, s) for s in validation.seeds if seeds is None or s in seeds]
    return out


def _figure(value: float | None) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.1f}"


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
            f"{r.preset:<28} {r.seed:>4} {r.threshold:>12} {at:>10} {seconds:>7} "
            f"{_figure(r.best):>9} {_figure(r.best_checkpoint):>16} {_figure(r.final):>14}  "
            f"{'pass' if r.passed else 'FAIL'}"
        )
    lines += [f"{r.preset} seed {r.seed}: {r.why}" for r in results if not r.passed]
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("presets", nargs="*", help="presets to run (default: all with validation)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="cases at once")
    parser.add_argument("-n", "--num-workers", type=int, help="run each case on N rollout workers")
    parser.add_argument("--backend", choices=["local", "ray"], default="local")
    parser.add_argument(
        "--seeds", type=int, nargs="+", help="only these of the seeds each validation names"
    )
    args = parser.parse_args()
    todo = cases(args.presets, args.seeds)
    started = time.perf_counter()
    results = []
    with ProcessPoolExecutor(args.jobs, mp_context=get_context("spawn")) as pool:
        # The batch presets' datasets first: made by their recipes where they are missing.
        recipes = missing_datasets(sorted({name for name, _ in todo}))
        made = {pool.submit(make_dataset, recipe): dataset for dataset, recipe in recipes.items()}
        for future in as_completed(made):
            error = future.result()
            outcome = f"could not be made: {error}" if error else "made by its recipe"
            print(f"dataset {made[future]}: {outcome}", flush=True)
        futures = {
            pool.submit(run_case, name, seed, args.num_workers, args.backend): (name, seed)
            for name, seed in todo
        }
        for future in as_completed(futures):
            try:
                r = future.result()
            except Exception as error:  # a case that cannot run fails alone, with its reason
                r = unrunnable(*futures[future], error)
            results.append(r)
            state = "pass" if r.passed else f"FAIL ({r.why})"
            reached = (
                f"reached {r.threshold} at {r.reached_at:,} env steps ({r.seconds:.0f} s)"
                if r.reached_at is not None and r.seconds is not None
                else f"never reached {r.threshold}"
            )
            print(
                f"{r.preset} seed {r.seed}: {state}; {reached}; best eval {_figure(r.best)}, "
                f"best.pt {_figure(r.best_checkpoint)}, final {_figure(r.final)} "
                f"({len(results)}/{len(todo)})",
                flush=True,
            )
    results.sort(key=lambda r: (r.preset, r.seed))
    print("\n" + "\n".join(table(results)))
    failed = sum(not r.passed for r in results)
    print(f"\n{len(results) - failed} passed, {failed} failed "
          f"({time.perf_counter() - started:.0f} s with {args.jobs} jobs)")  # fmt: skip
    workers = f" -n {args.num_workers} --backend {args.backend}" if args.num_workers else ""
    workers += f" --seeds {' '.join(map(str, args.seeds))}" if args.seeds else ""
    print(
        f"reproduce: python -m tests.learning.golden --jobs {args.jobs}{workers} "
        f"{' '.join(args.presets)}"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
