"""The graph manager's phases and budgets, on a counting environment and scripted agents."""

from __future__ import annotations

from pathlib import Path

import pytest

from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps
from coach.environments.environment import Environment
from coach.graph_managers.graph_manager import GraphManager
from coach.graph_managers.parameters import RunContext, ScheduleParameters
from coach.level_manager import LevelManager
from tests.toys import CountingEnvironment, ScriptedAgent, scripted


class ToyGraph(GraphManager):
    def __init__(self, schedule: ScheduleParameters, num_envs: int = 1, length: int = 10) -> None:
        super().__init__("toy", schedule)
        self.num_envs = num_envs
        self.length = length

    def _build(self, context: RunContext) -> tuple[Environment, list[LevelManager]]:
        environment = CountingEnvironment(self.num_envs, self.length)
        return environment, [LevelManager("main", scripted(1, environment, "a"), environment)]


def build(num_envs: int = 1, length: int = 10, **schedule: object) -> ToyGraph:
    return ToyGraph(ScheduleParameters(**schedule), num_envs, length).create_graph(RunContext())  # type: ignore[arg-type]


def agent(graph: GraphManager) -> ScriptedAgent:
    a = graph.top_level.agent
    assert isinstance(a, ScriptedAgent)
    return a


@pytest.mark.parametrize("num_envs", [1, 4])
def test_heatup_runs_its_env_steps(num_envs: int) -> None:
    graph = build(num_envs)
    graph.heatup(EnvironmentSteps(20))
    assert graph.env_steps == 20
    assert graph.phase is RunPhase.HEATUP
    assert agent(graph).env_steps == 20


def test_episode_budget_counts_finished_episodes() -> None:
    graph = build(1, length=5)
    graph.train_and_act(EnvironmentEpisodes(3))
    assert graph.environment.total_episodes == 3  # type: ignore[union-attr]
    assert graph.env_steps == 15


def test_evaluation_splits_episodes_evenly_and_is_not_counted() -> None:
    graph = build(3, length=4)
    graph.heatup(EnvironmentSteps(6))
    result = graph.evaluate(EnvironmentEpisodes(7))
    assert len(result.rewards) == 7  # copies run 2, 2 and 3 episodes
    assert result.rewards == [4.0] * 7 and result.lengths == [4] * 7
    assert graph.env_steps == 6  # evaluation steps stay off the training clock
    assert agent(graph).env_steps == 6  # nothing stored or counted while evaluating


def test_training_episodes_leave_out_the_evaluations() -> None:
    graph = build(1, length=5)
    graph.heatup(EnvironmentSteps(10))  # 2 episodes
    graph.evaluate(EnvironmentEpisodes(3))
    assert graph.training_episodes == 2
    graph.train_and_act(EnvironmentEpisodes(1))
    assert graph.training_episodes == 3
    assert graph.environment.total_episodes == 6  # type: ignore[union-attr]


def test_evaluation_starts_fresh_episodes() -> None:
    graph = build(1, length=10)
    graph.train_and_act(EnvironmentSteps(3))  # an episode 3 steps in
    result = graph.evaluate(EnvironmentEpisodes(1))
    assert result.lengths == [10]


def test_improve_alternates_training_and_evaluation() -> None:
    graph = build(
        1,
        length=5,
        heatup_steps=EnvironmentSteps(10),
        improve_steps=EnvironmentSteps(25),
        steps_between_evaluation_periods=EnvironmentSteps(10),
        evaluation_steps=EnvironmentEpisodes(2),
    )
    graph.improve()
    # Periods of 10, 10 and the 5 left; one evaluation after each.
    assert [e.env_steps for e in graph.evaluations] == [20, 30, 35]
    assert graph.env_steps == 35
    assert all(e.rewards == [5.0, 5.0] for e in graph.evaluations)


def test_episodes_that_cannot_be_saved_restart_and_the_log_says_so(tmp_path: Path) -> None:
    graph = ToyGraph(ScheduleParameters(), 1, length=10)
    graph.create_graph(RunContext(experiment_dir=tmp_path, quiet=True))
    graph.train_and_act(EnvironmentSteps(13))  # an episode 3 steps in
    state = graph.state_dict()
    assert state["episodes_in_flight"] and state["environment"] is None
    graph.close()

    restored = ToyGraph(ScheduleParameters(), 1, length=10)
    context = RunContext(experiment_dir=tmp_path, quiet=True, resume=state)
    restored.create_graph(context)
    assert restored.env_steps == 13
    assert context.resume is None  # consumed: the run does not hold a replay twice
    restored.train_and_act(EnvironmentSteps(10))
    restored.close()
    # A fresh episode was started: 10 more steps end exactly one whole episode.
    assert restored.environment.total_episodes == 2  # type: ignore[union-attr]
    assert "episodes in flight restart" in (tmp_path / "log.txt").read_text()
