"""One golden case: a preset trained on one seed within its validation's budgets, then
judged on its evaluations, its ``best.pt`` and its final agent (see `tests.learning.golden`,
which runs the cases and prints the table)."""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from coach.batch.graph_manager import BatchRLGraphManager
from coach.checkpoints import BEST, LATEST, load_checkpoint
from coach.core.step_units import EnvironmentEpisodes, StepUnit
from coach.errors import STOP_SIGNALS, CoachError, RunInterrupted, on_stop_signals
from coach.experiment import write_params
from coach.graph_managers.evaluation import EvaluationResult
from coach.graph_managers.graph_manager import GraphManager
from coach.graph_managers.parameters import RunContext
from coach.graph_managers.run_state import NOT_COMPARED, describe_changes, parameter_changes
from coach.presets import PresetValidation, load_preset
from coach.trust import read_yaml
from tests.learning import baselines

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
    return validation.kept(result.mean_reward, result.success_rate)


def score(validation: PresetValidation, result: EvaluationResult) -> float:
    """What the table shows of an evaluation: its mean reward, or its success rate when the
    validation promises nothing about the reward."""
    rewarded = validation.min_reward is not None or validation.max_reward is not None
    return result.mean_reward / validation.per_agent if rewarded else result.success_rate


def evaluate_checkpoint(
    name: str, state: dict[str, Any], seed: int, threads: int = 1
) -> EvaluationResult:
    """``state``'s agents in a freshly built graph of preset ``name``, on `EPISODES` fresh
    episodes seeded with ``seed`` (as ``coach -p NAME -crd PATH --evaluate 20`` does)."""
    graph = load_preset(name).graph_manager
    graph.create_graph(RunContext(seed=seed, quiet=True, num_threads=threads))
    try:
        graph.load_state_dict(state, whole_run=False)
        return graph.evaluate(EnvironmentEpisodes(EPISODES))
    finally:
        graph.close()


DID_NOT_RUN = "did not run"
"""How the reason of a case that `unrunnable` reports begins."""


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
    baselines: str = ""
    """The figures of the scripted players the promise is measured against, if any."""

    @property
    def ran(self) -> bool:
        """Whether the case trained and was judged (not refused or stopped: `unrunnable`)."""
        return not self.why.startswith(DID_NOT_RUN)


def _verdict(
    validation: PresetValidation,
    reached: bool,
    broken: bool,
    best: tuple[bool, EvaluationResult] | None,
    final: EvaluationResult,
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
    if not meets(validation, final):
        return f"the final agent on {EPISODES} fresh episodes does not keep the promise"
    return ""


RESULT = "golden-result.json"
"""A kept case folder's verdict: a case that has it is not run again."""
MARKS = "golden-marks.json"
"""A kept case folder's record of each evaluation: within budget, and the wall time."""
BEST_WITHIN = "golden-best.pt"
"""A copy of best.pt as it was after the best evaluation within every budget: a run goes on
to its first evaluation past a budget (a hierarchy's steps overshoot any boundary), and that
evaluation may write best.pt again."""
CHECKPOINT_SECONDS = 1800.0
"""How often a kept case saves a checkpoint to resume from (with its replay memory)."""


class _Stop:
    """A kept case's process stops on SIGINT or SIGTERM (``make golden`` or ``make
    benchmarks-docs`` interrupted): the running case stops after its current step and saves
    a checkpoint to resume from, a dataset's recipe is killed (the next run makes the dataset
    again), and no later case starts in this process. Repeated signals change nothing (the
    runner forwards its own to its cases): SIGKILL stops at once."""

    signum: int | None = None
    graph: GraphManager | None = None
    recipe: subprocess.Popen[str] | None = None

    @classmethod
    def handle(cls, signum: int, frame: Any) -> None:
        cls.signum = cls.signum or signum
        if cls.graph is not None:
            cls.graph.stop_requested = cls.signum
        if cls.recipe is not None:  # its whole session: the shell and what it started
            # Killed: a coach recording stopped by a signal keeps the episodes so far as a
            # dataset, which the next run would take for the whole one.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(cls.recipe.pid, signal.SIGKILL)

    @classmethod
    @contextlib.contextmanager
    def on_signals(cls) -> Iterator[None]:
        """Within: SIGINT and SIGTERM stop the case (in the main thread: a pool's worker, or
        a test), then the handlers before are back."""
        if cls.signum is not None:
            raise RunInterrupted(cls.signum)
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        try:
            with on_stop_signals(cls.handle):
                yield
        finally:
            cls.graph = None


def stop_on_signals() -> None:
    """A runner's pool processes' initializer: from their start, SIGINT and SIGTERM stop
    them as `_Stop` says, also while they wait for a case (rather than killing them, which
    breaks the pool)."""
    for number in STOP_SIGNALS:
        signal.signal(number, _Stop.handle)


def make_dataset(recipe: str) -> str | None:
    """Run a dataset's recipe (its shell commands) in a scratch folder, with this Python's
    ``coach`` first on the PATH; ``None`` when it worked, else the last line it printed (or
    the signal that ended it: see `_Stop`)."""
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", "")])}
    # A session of its own, so that a stop ends the shell and whatever it started.
    with (
        tempfile.TemporaryDirectory(prefix="coach-golden-dataset-") as scratch,
        subprocess.Popen(
            ["bash", "-e", "-c", recipe],
            cwd=scratch,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        ) as process,
    ):
        _Stop.recipe = process
        try:
            if _Stop.signum is not None:  # came before this recipe could be ended
                _Stop.handle(_Stop.signum, None)
            stdout, stderr = process.communicate()
        finally:
            _Stop.recipe = None
    if _Stop.signum is not None:
        return f"interrupted by signal {_Stop.signum}"
    if process.returncode == 0:
        return None
    lines = (stderr + stdout).strip().splitlines()
    return lines[-1] if lines else f"exit status {process.returncode}"


def _broken(
    validation: PresetValidation, evaluations: list[EvaluationResult], within: list[bool]
) -> bool:
    """Whether an evaluation within every budget broke the validation's ceiling."""
    return any(
        inside and validation.broken(e.success_rate, e.mean_reward)
        for e, inside in zip(evaluations, within, strict=True)
    )


def run_case(
    name: str,
    seed: int,
    workers: int | None = None,
    backend: str = "local",
    folder: Path | None = None,
    checkpoint_seconds: float = CHECKPOINT_SECONDS,
    threads: int = 1,
) -> GoldenResult:
    """Train ``name`` on ``seed`` within its validation's budgets (with ``workers`` rollout
    workers on ``backend``, if given), then judge the run and its checkpoints. ``threads``
    is the torch CPU threads of the case (``coach --threads``): a case's numbers depend on it,
    so an interrupted case resumes only with the same.

    In a temporary folder by default. In ``folder`` the case is kept: it saves a checkpoint
    every ``checkpoint_seconds`` (replay memory included), an interrupted case resumes from
    its latest one (exactly, as ``coach --resume`` does), and a finished case's verdict is
    read back instead of training again.
    """
    if folder is None:
        with tempfile.TemporaryDirectory() as directory:
            return _run_case(name, seed, workers, backend, Path(directory), None, threads)
    if (folder / RESULT).is_file():
        changes = changed_since(folder, load_preset(name).graph_manager.parameters())
        if changes:
            raise CoachError(
                f"{folder} was judged with other parameters than the preset has now "
                f"({describe_changes(changes)}): remove the folder to judge it again"
            )
        return GoldenResult(**json.loads((folder / RESULT).read_text()))
    with _Stop.on_signals():
        folder.mkdir(parents=True, exist_ok=True)
        result = _run_case(name, seed, workers, backend, folder, checkpoint_seconds, threads)
    partial = folder / f"{RESULT}.partial"
    partial.write_text(json.dumps(asdict(result)))
    partial.replace(folder / RESULT)
    return result


def changed_since(folder: Path, parameters: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """The parameters that the case kept in ``folder`` ran with (its ``params.yaml``) and
    that differ from ``parameters`` (a preset's now), as `parameter_changes` gives them.
    One that the file lacks is not a change: it was added since, at the value that keeps what
    ran before (its fingerprint shows that)."""
    path = folder / "params.yaml"
    if not path.is_file():
        return {}
    ran = read_yaml(path).get("parameters") or {}
    changes = parameter_changes({"parameters": ran}, parameters)
    return {p: c for p, c in changes.items() if p in ran and p not in NOT_COMPARED}


def _to_resume(directory: Path, threads: int, parameters: dict[str, Any]) -> dict[str, Any]:
    """The latest checkpoint of the kept case in ``directory``, which it resumes on the
    torch threads and with the parameters it trained with (its numbers depend on them: a
    preset edited since the case started starts it over)."""
    checkpoint = load_checkpoint(directory)
    if checkpoint.get("threads", threads) != threads:
        raise CoachError(
            f"{directory} trained with --threads {checkpoint['threads']}: resume it with the "
            "same (its numbers depend on them), or remove the folder to start it over"
        )
    changes = parameter_changes(checkpoint, parameters)
    if changes:
        raise CoachError(
            f"{directory} trained with other parameters than the preset has now "
            f"({describe_changes(changes)}): remove the folder to start it over"
        )
    return checkpoint


def _run_case(
    name: str,
    seed: int,
    workers: int | None,
    backend: str,
    directory: Path,
    checkpoint_seconds: float | None,
    threads: int,
) -> GoldenResult:
    preset = load_preset(name)
    assert preset.validation is not None, f"{name} declares no validation"
    validation, figures = baselines.resolve(name, preset.validation, seed)
    graph = preset.graph_manager
    if workers is not None:
        from coach.parallel.distributed import DistributedGraphManager
        from coach.parallel.parameters import DistributedParameters

        graph = DistributedGraphManager(
            graph, DistributedParameters(num_workers=workers, backend=backend)
        )
    kept = checkpoint_seconds is not None
    if kept and not (directory / "params.yaml").is_file():  # a whole experiment folder
        write_params(directory / "params.yaml", preset, seed, [])
    resumed = kept and (directory / "checkpoints" / LATEST).is_file()
    # For each evaluation: whether it came within every budget, and the wall time since
    # the run started (across its resumptions: the logger's clock, which a checkpoint keeps).
    marks: list[tuple[bool, float]] = []

    def stop_when(result: EvaluationResult) -> bool:
        spent = Spent.of(graph)
        assert graph.logger is not None  # a run in a folder has one
        marks.append((spent.within(validation), graph.logger.seconds))
        if kept:  # whole or not at all: the runner may be killed at any moment
            partial = directory / f"{MARKS}.partial"
            partial.write_text(json.dumps(marks))
            partial.replace(directory / MARKS)
        broken = _broken(validation, graph.evaluations, [inside for inside, _ in marks])
        # Train to the end of the budgets (a preset may train for longer), so that the
        # final agent shows what became of the best one.
        return broken or spent.exhausted(validation)

    graph.stop_when = stop_when
    best_path, best_within = directory / "checkpoints" / BEST, directory / BEST_WITHIN
    evaluation_period = graph.evaluation_period

    def keep_best_within(steps: StepUnit) -> None:
        before = best_path.stat().st_mtime_ns if best_path.is_file() else None
        evaluation_period(steps)  # its evaluation's mark is the last one now
        written = best_path.is_file() and best_path.stat().st_mtime_ns != before
        if written and marks and marks[-1][0]:
            shutil.copyfile(best_path, best_within)

    graph.evaluation_period = keep_best_within  # type: ignore[method-assign]
    # The checkpoint is held by the context alone, which create_graph empties once restored
    # (an Atari replay is about 7 GB).
    context = RunContext(
        seed=seed,
        experiment_dir=directory,
        quiet=True,
        num_threads=threads,
        resume=_to_resume(directory, threads, preset.graph_manager.parameters())
        if resumed
        else None,
    )
    if kept:
        context.checkpoint_seconds, context.save_memory = checkpoint_seconds, True
        context.keep_checkpoints = 2
    graph.create_graph(context)
    if kept:  # a signal stops it after its current step
        _Stop.graph, graph.stop_requested = graph, _Stop.signum
    try:
        if resumed and graph.evaluations:  # theirs are kept in the marks
            old = [tuple(m) for m in json.loads((directory / MARKS).read_text())]
            marks[:] = old[: len(graph.evaluations)]  # type: ignore[arg-type]
        graph.improve()
        # A finished case keeps its final checkpoint only: with an Atari replay in it, each
        # one is several GB.
        context.keep_checkpoints = 1
        final_path = graph.save_checkpoint()  # as the CLI's run ends, early stop or not
    except RunInterrupted:
        graph.save_checkpoint()  # with its memories: the case resumes from here
        raise
    finally:
        graph.close()
    evaluations = graph.evaluations
    within = [inside for inside, _ in marks]
    broken = _broken(validation, evaluations, within)
    reached: tuple[int, float] | None = None
    if validation.ceiling():
        if not broken and any(within):
            # A ceiling holds once the run kept it within its whole budget.
            last = max(i for i, inside in enumerate(within) if inside)
            reached = (evaluations[last].env_steps, marks[last][1])
    else:
        first = [i for i, e in enumerate(evaluations) if within[i] and meets(validation, e)]
        if first:
            reached = (evaluations[first[0]].env_steps, marks[first[0]][1])
    evaluation_seed = seed + SEED_OFFSET
    best: tuple[bool, EvaluationResult] | None = None
    if best_within.is_file():
        state = load_checkpoint(best_within)
        # best.pt was saved right after the evaluation that made it the best so far.
        index = len(state["evaluations"]) - 1
        best = (within[index], evaluate_checkpoint(name, state, evaluation_seed, threads))
    assert final_path is not None
    final = evaluate_checkpoint(name, load_checkpoint(final_path), evaluation_seed, threads)
    scores = [score(validation, e) for e, inside in zip(evaluations, within, strict=True) if inside]
    why = _verdict(validation, reached is not None, broken, best, final)
    if validation.baselines == "tictactoe" and best is not None:
        game_why, figures = baselines.tictactoe_verdict(
            name, load_checkpoint(best_within), evaluation_seed
        )
        why = why or game_why
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
        baselines=figures,
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
        why=f"{DID_NOT_RUN}: {first_line}",
    )
