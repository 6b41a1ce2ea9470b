"""The golden runner's rule (tests/learning/golden.py) on tiny presets of a few hundred steps:
a threshold reached within every budget and kept by best.pt on fresh episodes passes; one
out of reach, one reached past a budget, a broken ceiling and one lucky evaluation fail."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks.batch_rl import record_random_dataset
from coach.batch.graph_manager import BatchRLGraphManager
from coach.checkpoints import LATEST, load_checkpoint
from coach.core.step_units import StepUnit
from coach.errors import CoachError
from coach.graph_managers.evaluation import EvaluationResult
from coach.graph_managers.graph_manager import GraphManager
from coach.presets import PresetValidation, load_preset
from tests.integration.coach_cli import coach
from tests.learning import golden_case
from tests.learning.golden import missing_datasets, table
from tests.learning.golden_case import (
    EPISODES,
    MARKS,
    RESULT,
    GoldenResult,
    Spent,
    meets,
    run_case,
)

ONLINE = """
from coach import (
    BasicRLGraphManager, DQNAgentParameters, EnvironmentEpisodes, EnvironmentSteps,
    GymEnvironmentParameters, PresetValidation, ScheduleParameters,
)

agent = DQNAgentParameters()
agent.network_wrappers["main"].middleware.scheme = [16]
agent.algorithm.batch_size = 16
agent.memory.max_size = 1000
schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps({heatup}),
    improve_steps=EnvironmentSteps({improve}),
    steps_between_evaluation_periods=EnvironmentSteps({period}),
    evaluation_steps=EnvironmentEpisodes({episodes}),
)
graph_manager = BasicRLGraphManager(agent, GymEnvironmentParameters(level="{level}"), schedule)
validation = PresetValidation({validation})
"""
"""A DQN preset: heatup, then evaluations every ``period`` env steps."""

BATCH = """
from coach import PresetValidation
from coach.agents.bc import BCAgentParameters
from coach.batch.graph_manager import BatchRLGraphManager, BatchRLParameters, batch_schedule
from coach.environments.parameters import GymEnvironmentParameters

agent = BCAgentParameters()
agent.algorithm.batch_size = 64
graph_manager = BatchRLGraphManager(
    agent,
    GymEnvironmentParameters(level="CartPole-v1"),
    batch_schedule(3, evaluation_episodes=2, epochs_between_evaluations={period}),
    BatchRLParameters(dataset="test/cartpole-random-v0", off_policy_evaluation=False),
)
validation = PresetValidation({validation})
"""
"""Behavioral cloning over 3 epochs of a random CartPole dataset."""


def _preset(tmp_path: Path, text: str, **fields: object) -> str:
    """A preset file from ``text``; its validation checks seed 0 alone unless it names its
    seeds (a validation's default is seeds 0, 1 and 2)."""
    validation = str(fields.get("validation", ""))
    if "seeds=" not in validation:
        fields["validation"] = f"{validation}, seeds=(0,)" if validation else "seeds=(0,)"
    path = tmp_path / "Tiny.py"
    path.write_text(text.format(**fields))
    return str(path)


def _cartpole(
    tmp_path: Path, validation: str, improve: int = 300, period: int = 100, heatup: int = 100
) -> str:
    return _preset(
        tmp_path,
        ONLINE,
        heatup=heatup,
        improve=improve,
        period=period,
        episodes=2,
        level="CartPole-v1",
        validation=validation,
    )


SAME = ("reached_at", "best", "best_checkpoint", "final", "passed", "why")
"""What a resumed case's result shares with the uninterrupted case's (not its seconds)."""


def _killed_when(preset: str, tmp_path: Path, ready: Callable[[Path], bool]) -> Path:
    """The golden runner on ``preset`` keeps its case in ``tmp_path/runs`` with a checkpoint
    every 0.2 s and is killed (its whole process group: the pool's worker too) as soon as
    ``ready(case folder)``; returns the case folder."""
    runs = tmp_path / "runs"
    case = runs / "Tiny" / "seed0"
    command = [sys.executable, "-m", "tests.learning.golden", "--jobs", "1"]
    command += ["--runs", str(runs), "--checkpoint-seconds", "0.2", preset]
    process = subprocess.Popen(
        command,
        cwd=Path(__file__).resolve().parents[2],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        while not ready(case):
            assert process.poll() is None, "the run ended before it could be interrupted"
            time.sleep(0.02)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    return case


def test_a_threshold_reached_within_budget_and_kept_by_best_pt_passes(tmp_path: Path) -> None:
    # Any CartPole episode lasts 8 steps or more: a reward of 5 is always reached.
    result = run_case(_cartpole(tmp_path, "min_reward=5, max_env_steps=400"), seed=0)
    assert result.passed and result.why == ""
    assert result.reached_at == 200  # the first evaluation: 100 heatup + 100 training steps
    assert result.seconds is not None
    assert result.best_checkpoint is not None and result.best_checkpoint >= 5
    assert result.final is not None and result.final >= 5
    header, row = table([result])
    assert "best.pt 20 eps" in header and "final 20 eps" in header
    assert row.split()[-1] == "pass"


def test_a_case_trains_and_is_judged_on_the_threads_it_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    seen: list[int] = []
    train_and_act = GraphManager.train_and_act

    def spy(self: GraphManager, steps: StepUnit) -> None:
        seen.append(torch.get_num_threads())
        train_and_act(self, steps)

    monkeypatch.setattr(GraphManager, "train_and_act", spy)
    before = torch.get_num_threads()
    try:
        result = run_case(_cartpole(tmp_path, "min_reward=5, max_env_steps=400"), 0, threads=2)
        assert torch.get_num_threads() == 2  # the fresh evaluations' graphs too
    finally:
        torch.set_num_threads(before)
    assert result.passed and seen and set(seen) == {2}


def test_a_threshold_out_of_reach_fails(tmp_path: Path) -> None:
    result = run_case(_cartpole(tmp_path, "min_reward=501, max_env_steps=400"), seed=0)
    assert not result.passed and result.reached_at is None
    assert result.why == "no evaluation within budget reached the threshold"
    # The best agent and the final one are still evaluated, for the table.
    assert result.best_checkpoint is not None and result.final is not None
    lines = table([result])
    assert lines[1].split()[-1] == "FAIL" and lines[2].endswith(result.why)


def test_the_table_shows_a_success_rate_to_two_decimals_and_a_reward_to_one() -> None:
    rate = GoldenResult("P", 1, "success>=0.8", 42, 3.0, 1.0, 0.95, 0.85, True, "")
    reward = GoldenResult("Q", 0, "475", 42, 3.0, 500.0, 488.25, 476.04, True, "")
    rows = [line.split() for line in table([rate, reward])[1:]]
    assert rows[0][-4:] == ["1.00", "0.95", "0.85", "pass"]  # 0.85 at one decimal: "0.8"
    assert rows[1][-4:] == ["500.0", "488.2", "476.0", "pass"]


@pytest.mark.parametrize(
    "budget",
    [
        "max_env_steps=150",  # the first evaluation comes at 200 env steps
        "max_episodes=2",  # 100 random CartPole steps end more than 2 episodes
        "max_env_steps=400, max_episodes=2",  # every declared budget counts
    ],
)
def test_a_threshold_reached_past_a_budget_fails(tmp_path: Path, budget: str) -> None:
    result = run_case(_cartpole(tmp_path, f"min_reward=5, {budget}"), seed=0)
    assert not result.passed and result.reached_at is None
    assert result.why == "no evaluation within budget reached the threshold"


@pytest.mark.parametrize(
    ("ceiling", "passed"), [("max_reward=5", False), ("max_reward=1000", True)]
)
def test_a_ceiling_holds_when_no_evaluation_and_no_best_pt_breaks_it(
    tmp_path: Path, ceiling: str, passed: bool
) -> None:
    result = run_case(_cartpole(tmp_path, f"{ceiling}, max_env_steps=400"), seed=0)
    assert result.passed is passed
    if passed:
        assert result.reached_at == 400  # kept over the whole budget
    else:
        assert result.why == "an evaluation within budget broke the ceiling"


def test_one_lucky_evaluation_does_not_pass(tmp_path: Path) -> None:
    """A coin: some one-episode evaluation scores 1, but best.pt averages about 0.5 over 20."""
    preset = _preset(
        tmp_path,
        ONLINE,
        heatup=20,
        improve=200,
        period=10,
        episodes=1,
        level="tests.toys:CoinFlipEnv",
        validation="min_reward=1, max_env_steps=220",
    )
    result = run_case(preset, seed=0)
    assert result.reached_at is not None and result.best == 1
    assert result.best_checkpoint is not None and 0 < result.best_checkpoint < 1
    assert not result.passed
    assert result.why == f"best.pt on {EPISODES} fresh episodes does not keep the promise"


def test_a_final_agent_that_misses_fails_though_best_pt_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run whose best.pt keeps the promise and whose last checkpoint does not (its 20
    fresh episodes scored 0 here, as a collapsed agent's would) fails, and says why."""
    evaluate = golden_case.evaluate_checkpoint
    judged: list[EvaluationResult] = []

    def collapsed_at_the_end(
        name: str, state: dict[str, object], seed: int, threads: int = 1
    ) -> EvaluationResult:
        result = evaluate(name, state, seed, threads)
        judged.append(result)
        if len(judged) == 2:  # best.pt first, then the final agent
            result.rewards = [0.0] * len(result.rewards)
        return result

    monkeypatch.setattr(golden_case, "evaluate_checkpoint", collapsed_at_the_end)
    result = run_case(_cartpole(tmp_path, "min_reward=5, max_env_steps=400"), seed=0)
    assert len(judged) == 2 and result.best_checkpoint is not None
    assert result.best_checkpoint >= 5 and result.final == 0
    assert not result.passed
    assert result.why == f"the final agent on {EPISODES} fresh episodes does not keep the promise"
    lines = table([result])
    assert lines[1].split()[-1] == "FAIL" and lines[2].endswith(result.why)


@pytest.mark.parametrize(("period", "passed"), [(1, True), (2, False)])
def test_an_epoch_budget_counts_the_epochs_over_the_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, period: int, passed: bool
) -> None:
    """Within one epoch: evaluated after each epoch, it passes (and stops there); evaluated
    every 2 epochs, its first evaluation comes too late."""
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    preset = _preset(tmp_path, BATCH, period=period, validation="min_reward=5, max_epochs=1")
    graph = load_preset(preset).graph_manager
    assert isinstance(graph, BatchRLGraphManager)
    record_random_dataset(graph, 600)
    result = run_case(preset, seed=0)
    assert result.passed is passed
    assert (result.reached_at is not None) is passed


def test_spent_budgets_and_the_promise() -> None:
    validation = PresetValidation(min_reward=10, max_env_steps=100, max_episodes=5)
    assert Spent(100, 5, 0).within(validation) and not Spent(101, 5, 0).within(validation)
    assert not Spent(100, 6, 0).within(validation)
    assert Spent(100, 0, 0).exhausted(validation) and Spent(0, 5, 0).exhausted(validation)
    assert not Spent(99, 4, 7).exhausted(validation)  # no epoch budget declared
    from coach.graph_managers.evaluation import EvaluationResult

    assert meets(validation, EvaluationResult(0, [10.0, 10.0], [1, 1]))
    assert not meets(validation, EvaluationResult(0, [10.0, 9.0], [1, 1]))
    rate = PresetValidation(min_success_rate=0.5, max_env_steps=1)
    assert meets(rate, EvaluationResult(0, [0.0, 0.0], [1, 1], [1.0, 0.0]))
    assert not meets(rate, EvaluationResult(0, [9.0, 9.0], [1, 1], [0.0, 0.0]))
    ceiling = PresetValidation(max_reward=3, max_env_steps=1)
    assert meets(ceiling, EvaluationResult(0, [3.0], [1]))
    assert not meets(ceiling, EvaluationResult(0, [3.5], [1]))


def _golden(tmp_path: Path, preset: str) -> subprocess.CompletedProcess[str]:
    """The golden runner on ``preset``, in a subprocess, with a Minari root of its own."""
    root = Path(__file__).resolve().parents[2]
    env = {
        **os.environ,
        "MINARI_DATASETS_PATH": str(tmp_path / "minari"),
        "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", "tests.learning.golden", "--jobs", "1", preset],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _batch_with_recipe(tmp_path: Path, dataset: str, recipe: str) -> str:
    text = BATCH.replace(
        'dataset="test/cartpole-random-v0"', f'dataset="{dataset}", dataset_recipe={recipe!r}'
    )
    return _preset(tmp_path, text, period=1, validation="min_reward=5, max_epochs=1")


def test_a_missing_dataset_is_made_by_its_recipe_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The recipe runs in a scratch folder with this Python's coach first on the PATH.
    script = tmp_path / "make.py"
    preset = _batch_with_recipe(tmp_path, "test/cartpole-random-v0", f"python {script}")
    script.write_text(
        "from benchmarks.batch_rl import record_random_dataset\n"
        "from coach.presets import load_preset\n"
        f"record_random_dataset(load_preset({preset!r}).graph_manager, 600)\n"
    )
    result = _golden(tmp_path, preset)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "dataset test/cartpole-random-v0: made by its recipe" in result.stdout
    assert (tmp_path / "minari" / "test" / "cartpole-random-v0").is_dir()
    assert "1 passed, 0 failed" in result.stdout
    # Made once: the next run finds it.
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    assert missing_datasets([preset]) == {}


def test_a_case_that_cannot_run_fails_alone_with_its_reason(tmp_path: Path) -> None:
    # A batch preset whose dataset's recipe fails: the run reports both the recipe's last
    # words and the case, in the table, with no traceback, and exits 1.
    recipe = "echo 'no way to make it here' >&2; exit 3"
    preset = _batch_with_recipe(tmp_path, "test/never-made-v0", recipe)
    result = _golden(tmp_path, preset)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert "dataset test/never-made-v0: could not be made: no way to make it here" in result.stdout
    assert "did not run: no local Minari dataset 'test/never-made-v0'" in result.stdout
    assert "0 passed, 1 failed" in result.stdout


def test_ctrl_c_while_a_recipe_makes_a_dataset_ends_the_recipe_and_starts_no_case(
    tmp_path: Path,
) -> None:
    started = tmp_path / "started"
    recipe = f"touch {started}; sleep 97.125; touch {tmp_path / 'finished'}"
    preset = _batch_with_recipe(tmp_path, "test/slow-v0", recipe)
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "MINARI_DATASETS_PATH": str(tmp_path / "minari")}
    command = [sys.executable, "-m", "tests.learning.golden", "--jobs", "1"]
    process = subprocess.Popen(
        [*command, "--runs", str(tmp_path / "runs"), preset],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        while not started.is_file():
            assert process.poll() is None, "the runner ended before the recipe started"
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)  # to the runner alone: it forwards the stop
        output, _ = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 128 + signal.SIGINT, output
    assert "Traceback" not in output
    assert "dataset test/slow-v0: could not be made: interrupted by signal 2" in output
    assert "did not run: interrupted before it started" in output
    assert "interrupted by signal 2: the same command resumes the cases it stopped" in output
    # The recipe's shell and what it started are gone, not left to finish.
    assert subprocess.run(["pgrep", "-f", "sleep 97.125"], capture_output=True).returncode == 1
    assert not (tmp_path / "finished").exists()


def test_a_kept_case_resumes_exactly_where_it_was_interrupted_and_is_not_run_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    preset = _cartpole(tmp_path, "min_reward=5, max_env_steps=1600", improve=1500, period=300)
    whole = run_case(preset, seed=0)  # uninterrupted, in a temporary folder

    # Killed once a checkpoint and an evaluation are on disk.
    case = _killed_when(
        preset,
        tmp_path,
        lambda case: (case / "checkpoints" / LATEST).is_file() and (case / MARKS).is_file(),
    )
    assert not (case / RESULT).exists(), "killed too late: the case had finished"

    loaded: list[str] = []

    def load(path: Path) -> dict[str, object]:
        state = load_checkpoint(path)
        loaded.append(Path(str(state["path"])).name)
        return state

    # Its numbers depend on the torch threads: it resumes on the one it trained on, or not.
    with pytest.raises(CoachError, match="trained with --threads 1: resume it with the same"):
        run_case(preset, seed=0, folder=case, threads=2)
    monkeypatch.setattr(golden_case, "load_checkpoint", load)
    resumed = run_case(preset, seed=0, folder=case)
    assert loaded[0].startswith("checkpoint_"), loaded  # resumed, not started over
    assert [getattr(resumed, f) for f in SAME] == [getattr(whole, f) for f in SAME]

    # Finished: its verdict is read back, nothing trains.
    monkeypatch.setattr(golden_case, "_run_case", None)
    assert run_case(preset, seed=0, folder=case) == resumed


def test_a_case_killed_before_its_first_evaluation_resumes_from_its_checkpoint(
    tmp_path: Path,
) -> None:
    """A long heatup: the case saves its first checkpoint before it has evaluated (no marks
    yet), and resumes from it, with the wall time before the kill counted in its figures."""
    preset = _cartpole(tmp_path, "min_reward=5, max_env_steps=3600", 600, 600, heatup=3000)
    whole = run_case(preset, seed=0)
    case = _killed_when(preset, tmp_path, lambda case: (case / "checkpoints" / LATEST).is_file())
    latest = case / "checkpoints" / (case / "checkpoints" / LATEST).read_text().strip()
    assert not (case / MARKS).exists(), "killed too late: the case had evaluated"
    before = load_checkpoint(latest)["logger"]["seconds"]

    resumed = run_case(preset, seed=0, folder=case)
    assert [getattr(resumed, f) for f in SAME] == [getattr(whole, f) for f in SAME]
    assert resumed.seconds is not None and resumed.seconds > before > 0


def test_sigterm_stops_the_kept_cases_with_a_checkpoint_and_starts_no_other(
    tmp_path: Path,
) -> None:
    validation = "min_reward=5, max_env_steps=3100, seeds=(0, 1)"
    preset = _cartpole(tmp_path, validation, improve=3000, period=300)
    whole = run_case(preset, seed=0)  # uninterrupted, in a temporary folder

    # One case at a time: seed 0 runs, seed 1 waits its turn. SIGTERM to the runner alone,
    # once seed 0 has evaluated (no periodic checkpoint yet: every half hour by default).
    runs = tmp_path / "runs"
    case = runs / "Tiny" / "seed0"
    command = [sys.executable, "-m", "tests.learning.golden", "--jobs", "1"]
    process = subprocess.Popen(
        [*command, "--runs", str(runs), preset],
        cwd=Path(__file__).resolve().parents[2],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        while not (case / MARKS).is_file():
            assert process.poll() is None, "the run ended before it could be interrupted"
            time.sleep(0.02)
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 128 + signal.SIGTERM, output
    assert "Traceback" not in output
    assert "interrupted by signal 15: the same command resumes the cases it stopped" in output
    assert not (case / RESULT).exists(), "stopped too late: the case had finished"
    latest = (case / "checkpoints" / LATEST).read_text().strip()  # checkpoint_<env steps>.pt
    assert 300 <= int(latest.removeprefix("checkpoint_").removesuffix(".pt")) < 3000, latest
    assert not (runs / "Tiny" / "seed1").exists()  # never started

    resumed = run_case(preset, seed=0, folder=case)
    assert [getattr(resumed, f) for f in SAME] == [getattr(whole, f) for f in SAME]
    # Finished, it keeps its final checkpoint only (an Atari replay makes each several GB).
    assert [p.name for p in (case / "checkpoints").glob("checkpoint_*.pt")] == [
        "checkpoint_3100.pt"
    ]


def test_the_best_agent_is_the_best_within_the_budget(tmp_path: Path) -> None:
    """The run goes on to its first evaluation past the budget (at 300 env steps, past 250),
    which here scores higher than the one within it (at 200) and so writes best.pt again:
    what is judged is the run after the evaluation at 200, the best within the budget."""
    preset = _cartpole(tmp_path, "min_reward=5, max_env_steps=250", improve=1000)
    # Seed 4: the seed of 0 to 4 whose evaluation at 300 beats the one at 200.
    result = run_case(preset, seed=4, folder=tmp_path / "case")
    run = tmp_path / "case"
    saved = load_checkpoint(run / "checkpoints" / "best.pt")["evaluations"]
    evaluations = [EvaluationResult(*e) for e in saved]
    assert [e.env_steps for e in evaluations] == [200, 300]
    assert evaluations[1].mean_reward > evaluations[0].mean_reward  # best.pt is past it
    kept = load_checkpoint(run / golden_case.BEST_WITHIN)["evaluations"]
    assert [EvaluationResult(*e).env_steps for e in kept] == [200]
    assert result.passed and result.why == "" and result.reached_at == 200


def test_a_kept_case_restores_in_coach_by_its_level_short_name(tmp_path: Path) -> None:
    # A case builds its graph without the CLI: its checkpoints name the level as the preset
    # spells it ("lunarlander"), where a coach run knows it as LunarLander-v3.
    text = ONLINE.replace('level="{level}"', 'level="{level}", level_set="box2d"')
    preset = _preset(
        tmp_path,
        text,
        heatup=100,
        improve=100,
        period=100,
        episodes=1,
        level="lunarlander",
        validation="min_reward=-10_000, max_env_steps=200",
    )
    case = tmp_path / "case"
    run_case(preset, seed=0, folder=case)
    assert load_checkpoint(case)["level"] == "lunarlander"
    result = coach("-p", preset, "-crd", str(case), "--evaluate", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "evaluation" in result.stdout
    mismatch = coach("-p", preset, "-lvl", "bipedalwalker", "-crd", str(case), "--evaluate", "1",
                     cwd=tmp_path)  # fmt: skip
    assert mismatch.returncode == 2
    assert "from level 'lunarlander', this run is on 'BipedalWalker-v3'" in mismatch.stderr
