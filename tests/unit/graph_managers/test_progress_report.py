"""The console's live bars of a run's phases, drawn into a fake terminal; log.txt and a
console that is no terminal get the log lines only."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps
from coach.environments.environment import Environment
from coach.graph_managers.graph_manager import GraphManager
from coach.graph_managers.parameters import RunContext, ScheduleParameters
from coach.level_manager import LevelManager
from tests.toys import CountingEnvironment, FakeTerminal, scripted


class ToyGraph(GraphManager):
    def _build(self, context: RunContext) -> tuple[Environment, list[LevelManager]]:
        environment = CountingEnvironment(1, length=5)
        return environment, [LevelManager("main", scripted(1, environment, "a"), environment)]


def run(directory: Path, quiet: bool = False) -> ToyGraph:
    schedule = ScheduleParameters(
        heatup_steps=EnvironmentSteps(20),
        improve_steps=EnvironmentSteps(60),
        steps_between_evaluation_periods=EnvironmentSteps(30),
        evaluation_steps=EnvironmentEpisodes(2),
    )
    graph = ToyGraph("toy", schedule)
    graph.create_graph(RunContext(experiment_dir=directory, quiet=quiet))
    return graph


@pytest.fixture(autouse=True)
def columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "121")
    monkeypatch.delenv("TERM", raising=False)


def test_each_phase_draws_its_bar_below_the_log_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    console = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", console)
    graph = run(tmp_path)
    graph.improve()
    graph.close()
    text = console.getvalue()
    frames = [f.rstrip(" ") for f in text.replace("\n", "\r").split("\r") if f.strip()]
    bars = [f for f in frames if "|" in f]
    assert bars[0].startswith("heatup     0% |") and "| 0/20 env steps" in bars[0]
    assert any(f.startswith("heatup   100% |") and "20/20 env steps" in f for f in bars)
    assert any(f.startswith("evaluate 100% |") and "2/2 episodes" in f for f in bars)
    assert "mean reward 5.0" in text  # the evaluation's episodes so far
    # The training bar counts the whole budget across the evaluation periods, and its last
    # frame stays on the screen: the line ends, the logger's lines go below it.
    assert any(f.startswith("train     50% |") and "30/60 env steps" in f for f in bars)
    (last,) = [line for line in text.split("\n") if "train    100%" in line.rsplit("\r", 1)[-1]]
    assert "60/60 env steps" in last and "eval 5.0" in last  # the toy agent logs no episodes
    # The progress lines are on the console too, above the bars; log.txt has no bar.
    assert text.count("evaluate env steps") == 2
    log = (tmp_path / "log.txt").read_text()
    assert log.count("evaluate env steps") == 2 and "heatup   env steps" in log
    assert "\r" not in log and "█" not in log and "%" not in log
    assert graph.logger is not None and graph.logger.terminal.bars == []


def test_no_bar_where_the_console_is_no_terminal_or_quiet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for quiet, console in ((False, io.StringIO()), (True, FakeTerminal())):
        monkeypatch.setattr(sys, "stdout", console)
        graph = run(tmp_path / str(quiet), quiet)
        graph.improve()
        graph.close()
        text = console.getvalue()
        assert "\r" not in text and "%" not in text
        assert (text.count("evaluate env steps") == 2) is not quiet


def test_an_interrupted_run_leaves_the_terminal_clean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    console = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", console)
    graph = run(tmp_path)
    step, steps = graph.top_level.step, [0]

    def interrupted() -> object:
        steps[0] += 1
        if steps[0] == 55:  # in the first evaluation
            raise KeyboardInterrupt
        return step()

    graph.top_level.step = interrupted  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        graph.improve()
    assert graph.logger is not None
    graph.logger.info("interrupted")
    graph.close()
    text = console.getvalue()
    # The evaluation's bar is erased; the training bar's last frame stays, on a line of
    # its own, and the log line goes below it.
    assert text.endswith("\n") and text.split("\n")[-2].endswith("interrupted")
    last_bar = text.split("\n")[-3].rsplit("\r", 1)[-1]
    assert last_bar.startswith("train     50% |")
