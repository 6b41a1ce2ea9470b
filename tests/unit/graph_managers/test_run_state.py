"""Unit tests for coach/graph_managers/run_state.py: what a checkpoint holds of a run and how
a run carries on from it, on a counting environment and scripted agents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from coach.agents.algorithm import AlgorithmParameters
from coach.agents.held import HoldsEpisodes
from coach.agents.parameters import AgentParameters
from coach.checkpoints import load_checkpoint
from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps
from coach.environments.environment import Environment
from coach.errors import CoachError, RunInterrupted
from coach.graph_managers.graph_manager import GraphManager
from coach.graph_managers.parameters import RunContext, ScheduleParameters
from coach.graph_managers.run_state import RunProgress, restore_run, run_state, with_memories
from coach.level_manager import LevelManager
from coach.memories.experience_replay import ExperienceReplayParameters
from coach.memories.held_episodes import HeldEpisodes
from tests.toys import CountingEnvironment, ScriptedAgent


class SavingEnvironment(CountingEnvironment):
    """A counting environment that saves its episodes in flight (as CartPole's does)."""

    def state_dict(self) -> dict[str, Any] | None:
        return {"t": self.t.copy()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.t[:] = state["t"]


class HoldingAgent(HoldsEpisodes, ScriptedAgent):
    """A scripted agent whose steps wait for their episode's end before they are stored, as
    NEC's and DFP's do (Rainbow's n-step windows alike)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.episodes_held = HeldEpisodes(self.num_envs, lambda steps: {})


class ToyGraph(GraphManager):
    """One scripted agent (``agent_class``) with a replay memory, on episodes of 5 steps
    (that the environment saves with ``saves_episodes``)."""

    def __init__(
        self, agent_class: type[ScriptedAgent] = ScriptedAgent, saves_episodes: bool = False
    ) -> None:
        self.agent_class = agent_class
        self.saves_episodes = saves_episodes
        schedule = ScheduleParameters(
            heatup_steps=EnvironmentSteps(4),
            improve_steps=EnvironmentSteps(12),
            steps_between_evaluation_periods=EnvironmentSteps(8),
            evaluation_steps=EnvironmentEpisodes(1),
        )
        super().__init__("toy", schedule)

    def _build(self, context: RunContext) -> tuple[Environment, list[LevelManager]]:
        kind = SavingEnvironment if self.saves_episodes else CountingEnvironment
        environment = kind(1, length=5)
        params = AgentParameters(
            name="a",
            memory=ExperienceReplayParameters(max_size=100),
            # It stores, but never trains: a scripted agent has nothing to learn.
            algorithm=AlgorithmParameters(num_consecutive_playing_steps=EnvironmentSteps(10**6)),
        )
        agent = self.agent_class(
            1, params, environment.observation_space, environment.action_space, 1, seed=0
        )
        return environment, [LevelManager("main", agent, environment)]


def _run(steps: int = 0) -> ToyGraph:
    graph = ToyGraph()
    graph.create_graph(RunContext(seed=3))
    graph.improve()
    if steps:
        graph.train_and_act(EnvironmentSteps(steps))
    return graph


def _memory_size(state: dict[str, Any]) -> int:
    return int(state["agents"][0]["memory"]["size"])


def test_the_state_holds_where_the_loop_stands() -> None:
    graph = _run(steps=3)
    state = run_state(graph)
    assert state["preset"] == "toy" and state["seed"] == 3
    assert (state["device"], state["threads"]) == ("cpu", 1)  # a run's numbers depend on them
    assert state["phase"] == RunPhase.TRAIN.value
    assert state["progress"] == {
        "evaluation_env_steps": 10,  # two evaluations of one 5-step episode
        "evaluation_episodes": 2,
        "frozen_env_steps": 16,
        "seeded": True,
        "heatup_done": True,
        "improve_start": 4,
        "period_end": None,
    }
    assert (state["env_total_steps"], state["env_total_episodes"]) == (29, 4)
    assert state["evaluations"] == [[12, [5.0], [5], []], [16, [5.0], [5], []]]
    # The counting environment cannot save its episodes: the run notes that it had some.
    assert state["episodes_in_flight"] and state["environment"] is None
    assert state["agents"][0]["memory"] is None
    assert _memory_size(run_state(graph, include_memory=True)) == 19


def test_a_restored_run_carries_on_where_it_stood() -> None:
    graph = _run(steps=3)
    state = run_state(graph, include_memory=True)
    restored = ToyGraph()
    restored.create_graph(RunContext(seed=3))
    restore_run(restored, state)
    assert restored.phase is RunPhase.TRAIN
    assert restored.top_level.phase is RunPhase.TRAIN
    assert restored.progress == graph.progress
    assert restored.progress is not graph.progress
    assert restored.env_steps == graph.env_steps == 19
    assert restored.evaluations == graph.evaluations
    assert restored.fresh_episodes  # its episodes were not saved: new ones start
    assert len(restored.top_level.agent.memory) == 19  # type: ignore[arg-type]
    again = run_state(restored, include_memory=True)["agents"][0]
    assert again["rng"] == state["agents"][0]["rng"]
    for column in ("actions", "rewards"):
        np.testing.assert_array_equal(again["memory"][column], state["agents"][0]["memory"][column])


@pytest.mark.parametrize(
    ("saved", "said"),
    [
        ({"threads": 2}, "resumed from torch threads 2 to 1: the numbers will differ"),
        ({"device": "cuda:0", "threads": 4}, "from device cuda:0 to cpu and torch threads 4 to 1"),
        ({}, None),  # the same device and threads
        ({"device": None, "threads": None}, None),  # a checkpoint from before they were kept
    ],
)
def test_a_run_resumed_on_another_device_or_threads_says_its_numbers_will_differ(
    saved: dict[str, Any], said: str | None, tmp_path: Path
) -> None:
    state = {**run_state(_run(steps=3)), **saved}
    state = {key: value for key, value in state.items() if saved.get(key, ...) is not None}
    restored = ToyGraph()
    restored.create_graph(RunContext(seed=3, experiment_dir=tmp_path, quiet=True))
    restore_run(restored, state)
    restored.close()
    log = (tmp_path / "log.txt").read_text()
    if said is None:
        assert "will differ" not in log
    else:
        assert said in log


def test_only_the_agents_are_restored_when_not_the_whole_run() -> None:
    state = run_state(_run(steps=3), include_memory=True)
    fresh = ToyGraph()
    fresh.create_graph(RunContext(seed=3))
    restore_run(fresh, state, whole_run=False)
    assert fresh.progress == RunProgress()
    assert fresh.evaluations == [] and fresh.env_steps == 0
    assert len(fresh.top_level.agent.memory) == 19  # type: ignore[arg-type]


def test_a_checkpoint_of_other_agents_is_refused_with_what_it_holds() -> None:
    state = run_state(_run())
    graph = ToyGraph()
    graph.create_graph(RunContext())
    with pytest.raises(CoachError, match=r"ckpt.pt has 2 agents, this graph 1"):
        restore_run(graph, {**state, "agents": state["agents"] * 2, "path": "ckpt.pt"})
    # Whatever an agent fails to find in its state, the error names the checkpoint.
    with pytest.raises(CoachError, match=r"the checkpoint does not fit this preset's agents"):
        restore_run(graph, {**state, "agents": [{}]})


def test_with_memories_adds_the_memories_as_they_are_now() -> None:
    graph = _run()
    before = run_state(graph)
    graph.train_and_act(EnvironmentSteps(6))
    state = with_memories(before, graph.levels)
    assert _memory_size(state) == 22
    assert before["agents"][0]["memory"] is None  # the state it was given is left alone
    assert {k: v for k, v in state.items() if k != "agents"} == {
        k: v for k, v in before.items() if k != "agents"
    }
    agent, agent_before = state["agents"][0], before["agents"][0]
    assert all(agent[key] is agent_before[key] for key in agent_before if key != "memory")


@pytest.mark.parametrize("agent_class", [ScriptedAgent, HoldingAgent])
def test_a_run_stopped_during_an_evaluation_runs_it_again_and_ends_the_same(
    agent_class: type[ScriptedAgent], tmp_path: Path
) -> None:
    """Also for an agent that holds the steps of its episodes back: the training episodes in
    flight when the evaluation starts (saved, then restored on resume) reach its memory
    once, not again when the evaluation runs again."""
    uninterrupted = ToyGraph(agent_class, saves_episodes=True)
    uninterrupted.create_graph(RunContext(seed=3))
    uninterrupted.improve()

    context = {"seed": 3, "experiment_dir": tmp_path, "quiet": True, "save_memory": True}
    graph = ToyGraph(agent_class, saves_episodes=True)
    graph.create_graph(RunContext(**context))
    step = graph.top_level.step

    def step_then_stop_in_the_second_evaluation() -> Any:
        response = step()
        if graph.phase is RunPhase.EVALUATE and len(graph.evaluations) == 1:
            graph.stop_requested = 15  # as SIGTERM does, a step into the second evaluation
        return response

    graph.top_level.step = step_then_stop_in_the_second_evaluation  # type: ignore[method-assign]
    with pytest.raises(RunInterrupted):
        graph.improve()
    path = graph.save_checkpoint()
    graph.close()
    assert path is not None
    state = load_checkpoint(path)
    assert state["phase"] == RunPhase.TRAIN.value  # the run as it was before the evaluation
    assert [e[0] for e in state["evaluations"]] == [12]

    resumed = ToyGraph(agent_class, saves_episodes=True)
    resumed.create_graph(RunContext(**context, resume=state))
    resumed.improve()
    resumed.close()
    # The evaluation that was stopped runs again, whole, and the run ends as if never stopped.
    assert resumed.evaluations == uninterrupted.evaluations
    assert [e.env_steps for e in resumed.evaluations] == [12, 16]
    assert resumed.progress == uninterrupted.progress
    assert resumed.env_steps == uninterrupted.env_steps
    ended = uninterrupted.top_level.agent.memory.state_dict()  # type: ignore[union-attr]
    again = resumed.top_level.agent.memory.state_dict()  # type: ignore[union-attr]
    assert again["size"] == ended["size"] == 16  # heatup and training steps, each once
    for column in ("actions", "rewards", "truncated"):
        np.testing.assert_array_equal(again[column], ended[column])
