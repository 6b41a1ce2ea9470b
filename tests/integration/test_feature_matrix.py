"""Every agent family through the feature combinations research users make (issue 59), so
that a new family cannot ship with a broken combination:

1. resume after an interrupt during an evaluation: a run stopped as SIGINT stops it in its
   first evaluation, checkpointed with its memories (``--save-memory``), then resumed in a
   fresh graph, writes the progress.csv rows of the run never stopped;
2. rollout workers (``-n 2``, local processes): the run ends within its budget and its
   learner took gradient steps;
3. ``coach export``: the run's checkpoint as an ONNX file that onnxruntime runs on batches
   of 1 and 3;
4. ``--record-dataset``: the run's episodes as a Minari dataset that loads back.

The families are derived from the shipped presets: one per graph manager class and agent
classes (`describe`), so a new agent class, a multi-agent level, a hierarchy, batch RL and
asynchronous workers are each a family of their own. A family's preset is its first by name
among the cheapest environments (CartPole and Pendulum before other environments without a
level set, those before Atari, Doom, MuJoCo, dm_control and Fetch). Each run is tiny: the
budgets and per-preset overrides of ``tests/presets/test_every_preset_runs.py``.

Where a combination does not go with a family by design (export of a hierarchy or of a
multi-agent level, recording a hierarchy or asynchronous workers, ``-n`` for batch RL), the
test checks that Coach refuses it as a user error: a `CoachError`, and the command's one line
``coach: error: ...`` with exit code 2, before anything is written. A combination neither
supported nor refused fails.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime
import pytest

from benchmarks.batch_rl import record_random_dataset
from coach.agents.parameters import AgentParameters
from coach.batch.datasets import load_dataset
from coach.batch.graph_manager import BatchRLGraphManager
from coach.batch.recording import check_recording, record_run
from coach.checkpoints import load_checkpoint
from coach.core.run_phase import RunPhase
from coach.errors import CoachError, RunInterrupted
from coach.experiment import write_params
from coach.export.files import export_run
from coach.graph_managers.graph_manager import GraphManager
from coach.graph_managers.parameters import RunContext
from coach.memories.rollout import RolloutParameters
from coach.parallel.asynchronous import AsynchronousGraphManager
from coach.parallel.distributed import DistributedGraphManager
from coach.parallel.parameters import DistributedParameters
from coach.parameters import set_parameter
from coach.presets import Preset, describe, list_presets, load_preset
from tests.integration.coach_cli import refused, rewards
from tests.presets.test_every_preset_runs import TINY, TRAINING

SEED = 0
WORKERS = 2

BATCH_SCHEDULE = {
    "schedule.improve_steps": "Epochs(2)",
    "schedule.steps_between_evaluation_periods": "Epochs(1)",
    "schedule.evaluation_steps": "EnvironmentEpisodes(1)",
}
"""A batch preset's budget: two epochs of its dataset, an evaluation episode after each."""
BATCH_DATASET_STEPS = 600
"""The steps of uniform random actions a batch preset's dataset holds."""


def _cost(preset: Preset) -> int:
    """How dear a preset's environment is to run: 0 for CartPole and Pendulum, 1 for the
    other environments without a level set, 2 for a level set's (Atari, Doom, MuJoCo, ...)."""
    environment = preset.graph_manager.parameters().get("environment")
    if getattr(environment, "level_set", None) is not None:
        return 2
    level = str(getattr(environment, "level", ""))
    return 0 if level.startswith(("CartPole-", "Pendulum-")) else 1


def families() -> dict[str, str]:
    """The families of the shipped presets, by their preset: one per graph manager class and
    agent classes, its preset the first by name among the cheapest."""
    chosen: dict[tuple[str, str], tuple[int, str]] = {}
    for name in list_presets():
        preset = load_preset(name)
        _, agents = describe(preset)
        family = (type(preset.graph_manager).__name__, agents)
        chosen[family] = min(chosen.get(family, (3, "")), (_cost(preset), name))
    return {name: f"{graph} {agents}" for (graph, agents), (_, name) in sorted(chosen.items())}


FAMILIES = families()


def _params(names: dict[str, str]) -> list[Any]:
    """One case per family, the cases of a family on one xdist worker: they share its run."""
    return [
        pytest.param(name, id=name, marks=pytest.mark.xdist_group(f"matrix_{name}"))
        for name in names
    ]


CASES = _params(FAMILIES)


RECORDING = {
    # 16 copies of 25-step episodes: 300 steps end none of them; 4 copies end a dozen.
    "SimpleSpread_IndependentPPO": {"environment.num_envs": "4"},
}
"""What a family's recording run needs on top of its tiny budget to end whole episodes."""


def _is_batch(name: str) -> bool:
    return isinstance(load_preset(name).graph_manager, BatchRLGraphManager)


def _is_asynchronous(name: str) -> bool:
    return isinstance(load_preset(name).graph_manager, AsynchronousGraphManager)


def tiny(name: str, more: dict[str, str] | None = None) -> Preset:
    """``name`` with its tiny budget (and what it needs to store and learn within it), and
    ``more`` overrides."""
    preset = load_preset(name)
    roots = preset.graph_manager.parameters()
    overrides = BATCH_SCHEDULE if _is_batch(name) else {**TINY, **TRAINING.get(name, {})}
    for path, value in {**overrides, **(more or {})}.items():
        set_parameter(roots, path, value)
    return preset


def _agent_parameters(preset: Preset) -> list[AgentParameters]:
    """The parameters of every agent of the preset's graph (a hierarchy's and a multi-agent
    level's, all of them)."""
    roots = preset.graph_manager.parameters()
    agents = roots.get("agents") if roots.get("agent") is None else [roots["agent"]]
    return list(agents.values()) if isinstance(agents, dict) else list(agents or [])


def _blocks_over_workers(preset: Preset) -> None:
    """Its on-policy agents' blocks as long over the workers' copies as over the copies of
    one process: each worker collects its share of the rollout (or a step)."""
    for params in _agent_parameters(preset):
        if isinstance(params.memory, RolloutParameters):
            params.memory.rollout_length = max(1, params.memory.rollout_length // WORKERS)


def _batch_dataset(name: str) -> None:
    """Record a batch preset's dataset under its dataset's name (uniform random actions in
    its environment), unless it is there: batch presets share their datasets."""
    graph = load_preset(name).graph_manager
    assert isinstance(graph, BatchRLGraphManager)
    minari = Path(os.environ["MINARI_DATASETS_PATH"])
    if not (minari / graph.batch_params.dataset).is_dir():
        record_random_dataset(graph, BATCH_DATASET_STEPS)


def run(
    name: str,
    folder: Path,
    resume: dict[str, Any] | None = None,
    stop: Callable[[GraphManager], bool] | None = None,
    prepare: Callable[[GraphManager], Any] | None = None,
    more: dict[str, str] | None = None,
) -> GraphManager:
    """The tiny run of ``name`` in ``folder``, as ``coach -p NAME --save-memory`` makes it:
    checkpointed at its end, or when ``stop`` says after a step (as SIGINT stops it).
    ``prepare`` is given the built graph before it runs; ``more`` overrides are set on top
    of the tiny budget's."""
    if _is_batch(name):
        _batch_dataset(name)
    preset = tiny(name, more)
    if resume is None:
        folder.mkdir(parents=True)
        write_params(folder / "params.yaml", preset, SEED, [])
    graph = preset.graph_manager.create_graph(
        RunContext(seed=SEED, experiment_dir=folder, quiet=True, save_memory=True, resume=resume)
    )
    if stop is not None:
        step = graph.top_level.step

        def step_then_stop(*args: Any, **kwargs: Any) -> Any:
            response = step(*args, **kwargs)
            if graph.stop_requested is None and stop(graph):
                graph.stop_requested = signal.SIGINT
            return response

        graph.top_level.step = step_then_stop  # type: ignore[method-assign]
    try:
        after = prepare(graph) if prepare is not None else None
        try:
            graph.improve()
        except RunInterrupted:
            assert stop is not None
        graph.save_checkpoint()
        if after is not None:
            after.save(graph.logger)
    finally:
        graph.close()
    return graph


class Runs:
    """The folders of the families' tiny runs never stopped, each made once per process
    (the cases of a family share it), and the Minari folder of their datasets."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.minari = root / "minari"
        self._made: dict[str, Path] = {}

    def reference(self, name: str) -> Path:
        """The folder of ``name``'s tiny run, never stopped."""
        if name not in self._made:
            folder = self.root / "reference" / name
            run(name, folder)
            self._made[name] = folder
        return self._made[name]


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return Runs(tmp_path_factory.mktemp("matrix"))


@pytest.fixture(autouse=True)
def _datasets(runs: Runs, monkeypatch: pytest.MonkeyPatch) -> None:
    """Minari's datasets (batch presets' and recorded ones) in the session's folder."""
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(runs.minari))


def test_every_agent_class_of_the_shipped_presets_is_in_a_family() -> None:
    def classes(agents: str) -> set[str]:
        return set(agents.split(" / "))

    every = set().union(*(classes(describe(load_preset(n))[1]) for n in list_presets()))
    covered = set().union(*(classes(family.split(" ", 1)[1]) for family in FAMILIES.values()))
    assert covered == every


def _in_first_evaluation(graph: GraphManager) -> bool:
    return graph.phase is RunPhase.EVALUATE and not graph.evaluations


@pytest.mark.parametrize("name", CASES)
def test_resume_after_an_interrupt_during_an_evaluation_ends_as_never_stopped(
    name: str, tmp_path: Path, runs: Runs
) -> None:
    whole = runs.reference(name)
    folder = tmp_path / "run"
    run(name, folder, stop=_in_first_evaluation)
    state = load_checkpoint(folder)
    assert state["evaluations"] == []  # the run as it was before its first evaluation
    stopped = rewards(folder)
    assert len(stopped) < len(rewards(whole))
    run(name, folder, resume=state)
    log = (folder / "log.txt").read_text()
    if _is_asynchronous(name):
        # Asynchronous workers interleave their updates as the machine schedules them: no
        # two runs have the same numbers (the log says so), but the resumed one evaluates
        # where the run never stopped did.
        assert "does not reproduce the same numbers" in log
        evaluations = [(p, steps) for p, steps, _ in rewards(folder) if p == "evaluate"]
        assert evaluations == [(p, steps) for p, steps, _ in rewards(whole) if p == "evaluate"]
    else:
        assert rewards(folder) == rewards(whole), log


@pytest.mark.parametrize("name", CASES)
def test_rollout_workers_end_within_the_budget_and_the_learner_learns(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    preset = tiny(name)
    graph: Any = preset.graph_manager
    try:
        if isinstance(graph, AsynchronousGraphManager):
            graph.take_worker_options(WORKERS)
        else:
            _blocks_over_workers(preset)
            graph = DistributedGraphManager(graph, DistributedParameters(num_workers=WORKERS))
    except CoachError as error:
        folder = tmp_path / "experiments"
        line = refused(["-p", name, "-n", str(WORKERS), "-ep", str(folder)], capsys)
        assert line == f"coach: error: {error}"
        assert not folder.exists()
        return
    graph.create_graph(RunContext(seed=SEED, experiment_dir=tmp_path, quiet=True))
    try:
        graph.improve()
    finally:
        graph.close()
    if isinstance(graph, AsynchronousGraphManager):
        agents = [graph.agent]
        assert graph.env_steps == 300
    else:
        agents = list(graph.agents.values())
        # Each phase ends within a step of every copy of every worker.
        copies = WORKERS * graph.top_level.num_envs
        assert 300 <= graph.env_steps <= 300 + 3 * (copies - 1), graph.env_steps
    assert len(graph.evaluations) == 2 and all(e.rewards for e in graph.evaluations)
    assert all(agent.training_steps >= 1 for agent in agents)


@pytest.mark.parametrize("name", CASES)
def test_export_runs_with_onnxruntime_on_batches_of_1_and_3(
    name: str,
    tmp_path: Path,
    runs: Runs,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = runs.reference(name)
    path = tmp_path / "policy.onnx"
    try:
        export_run(folder, "onnx", path)
    except CoachError as error:
        line = refused(["export", "-crd", str(folder), "-o", str(path)], capsys)
        assert line == f"coach: error: {error}"
        assert not path.exists()
        return
    session = onnxruntime.InferenceSession(str(path))
    generator = np.random.default_rng(0)
    for batch in (1, 3):
        inputs = {
            i.name: generator.standard_normal((batch, *i.shape[1:])).astype(np.float32)
            for i in session.get_inputs()
        }
        (actions,) = session.run(["action"], inputs)
        assert len(actions) == batch


@pytest.mark.parametrize("name", CASES)
def test_record_dataset_writes_a_dataset_that_loads_back(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = f"matrix/{name.lower()}-v0"
    preset = tiny(name)
    # Asynchronous workers act in their own processes, as rollout workers do.
    elsewhere = isinstance(preset.graph_manager, AsynchronousGraphManager)
    try:
        check_recording(dataset, distributed=elsewhere, graph=preset.graph_manager)
    except CoachError as error:
        folder = tmp_path / "experiments"
        line = refused(["-p", name, "--record-dataset", dataset, "-ep", str(folder)], capsys)
        assert line == f"coach: error: {error}"
        assert not folder.exists()
        return
    recorders: list[Any] = []

    def record(graph: GraphManager) -> Any:
        recorders.append(record_run(graph, dataset, f"coach -p {name}", evaluating=False))
        return recorders[-1]

    run(name, tmp_path / "run", prepare=record, more=RECORDING.get(name))
    (recorder,) = recorders
    # A multi-agent level's episodes are recorded per agent id, each a dataset of its own.
    names = getattr(recorder, "names", {"": dataset})
    episodes = recorder.episodes if isinstance(recorder.episodes, dict) else {"": recorder.episodes}
    assert any(episodes.values()), "no whole episode recorded"
    for agent_id, kept in episodes.items():
        if kept:
            recorded = load_dataset(names[agent_id])
            assert recorded.num_episodes == len(kept)
            assert recorded.total_steps == sum(len(e.rewards) for e in kept)
