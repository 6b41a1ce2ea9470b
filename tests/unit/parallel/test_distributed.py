"""Unit tests for coach/parallel/distributed.py, mostly on the local backend
(coach/parallel/local.py): real worker processes on real environments, the learner in this
process. The fault test runs on both backends, the recurrent one too, on one Ray runtime."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps
from coach.errors import CoachError
from coach.filters.observation.normalization import ObservationNormalizationFilter
from coach.filters.pipeline import InputFilter
from coach.graph_managers.parameters import RunContext
from coach.memories.rollout import RolloutParameters
from coach.parallel.distributed import DistributedGraphManager
from coach.parallel.parameters import DistributedParameters
from coach.parallel.pool import WorkerFailed
from coach.presets import load_preset
from tests.toys import FakeTerminal


def _fit_minibatch(graph: Any, workers: int) -> None:
    """An on-policy minibatch no bigger than the workers' block (what it was in effect)."""
    if isinstance(graph.agent_params.memory, RolloutParameters):
        block = graph.agent_params.memory.rollout_length * graph.env_params.num_envs * workers
        algorithm = graph.agent_params.algorithm
        algorithm.batch_size = min(algorithm.batch_size, block)


def _graph(
    preset: str,
    tmp_path: Path,
    seed: int = 0,
    num_envs: int = 1,
    **params: object,
) -> DistributedGraphManager:
    graph = load_preset(preset).graph_manager
    graph.env_params.num_envs = num_envs
    _fit_minibatch(graph, workers=2)
    distributed = DistributedGraphManager(
        graph,
        DistributedParameters(**{"num_workers": 2, **params}),  # type: ignore[arg-type]
    )
    return distributed.create_graph(RunContext(seed=seed, experiment_dir=tmp_path, quiet=True))


def _scalars(tmp_path: Path, run: str, tag: str) -> list[float]:
    events = EventAccumulator(str(tmp_path / "tensorboard" / run))
    events.Reload()
    return [e.value for e in events.Scalars(tag)]


def test_off_policy_workers_fill_the_learners_replay(tmp_path: Path) -> None:
    graph = _graph("CartPole_DQN", tmp_path, block_steps=50)
    try:
        graph.heatup(EnvironmentSteps(400))
        agent = graph.agents["agent"]
        assert len(agent.memory) == graph.collected_steps == graph.env_steps >= 400
        assert agent.training_steps == 0
        heatup = graph.collected_steps
        graph.train_and_act(EnvironmentSteps(600))
        assert graph.env_steps >= 1000 and len(agent.memory) == graph.collected_steps
        assert agent.training_steps > 0 and graph.version > 0
        assert agent.training_env_steps == graph.collected_steps - heatup
        graph.evaluate(EnvironmentEpisodes(2))  # in the learner's own environment
        assert len(agent.memory) == graph.collected_steps  # evaluation stores nothing
        assert graph.logger is not None and graph.logger.episodes == graph.collected_episodes
    finally:
        graph.close()
    for rank in (1, 2):
        assert _scalars(tmp_path, f"worker_{rank}", "Time/env_steps_per_second")
    lags = _scalars(tmp_path, "graph", "Time/policy_lag")
    assert lags and max(lags) <= 2 and min(lags) >= 0


def test_heatup_blocks_are_long_and_share_the_budget_evenly(tmp_path: Path) -> None:
    graph = _graph("CartPole_DQN", tmp_path, block_steps=50, heatup_block_steps=300)
    sizes: dict[str, list[int]] = {"HEATUP": [], "TRAIN": []}
    account = graph._account

    def record(block):  # type: ignore[no-untyped-def]
        sizes[block.phase.name].append(block.env_steps)
        account(block)

    graph._account = record  # type: ignore[method-assign]
    try:
        graph.heatup(EnvironmentSteps(4000))
        graph.train_and_act(EnvironmentSteps(200))
    finally:
        graph.close()
    heatup = sizes["HEATUP"]
    assert sum(heatup) == 4000  # never more than the budget needs
    assert max(heatup) == 300
    assert len(heatup) > 4000 // 300  # the end of the budget shared out in smaller blocks
    assert set(sizes["TRAIN"]) == {50}


def test_on_policy_workers_collect_one_block_each_per_update(tmp_path: Path) -> None:
    graph = _graph("CartPole_ClippedPPO", tmp_path, num_envs=2)
    try:
        agent = graph.agents["agent"]
        block = agent.rollout.length * 2
        graph.train_and_act(EnvironmentSteps(3 * 2 * block))
        assert graph.collected_steps == 3 * 2 * block
        assert agent.training_rounds == 3 and graph.version == 3
        assert agent.rollout.num_envs == 4  # the two workers' blocks side by side
    finally:
        graph.close()
    assert set(_scalars(tmp_path, "graph", "Time/policy_lag")) == {0.0}


def test_on_policy_runs_repeat_with_the_same_seed(tmp_path: Path) -> None:
    weights = []
    for run in range(2):
        graph = _graph("CartPole_ClippedPPO", tmp_path / str(run), seed=3)
        try:
            graph.train_and_act(EnvironmentSteps(2 * 2 * graph.agents["agent"].rollout.length))
            networks = graph.agents["agent"].networks.values()
            weights.append([p.clone() for n in networks for p in n.online.parameters()])
        finally:
            graph.close()
    assert all(torch.equal(a, b) for a, b in zip(*weights, strict=True))


@pytest.mark.parametrize("backend", ["local", "ray"])
@pytest.mark.usefixtures("backend_up")
def test_recurrent_workers_carry_their_own_hidden_states_to_the_learner(
    backend: str, tmp_path: Path
) -> None:
    graph = _graph("CartPoleNoVel_RecurrentPPO", tmp_path, num_envs=2, backend=backend)
    try:
        agent = graph.agents["agent"]
        learner = agent.learner
        learn, replayed = learner.learn_block, []

        def replay_then_learn(clock: Any) -> Any:
            # The merged block, unrolled by the learner from the states the workers stored,
            # gives what the workers computed when they acted.
            learner.compute_advantages()
            with torch.no_grad():
                for minibatch in learner.minibatches():
                    view = learner.evaluate(minibatch)
                    torch.testing.assert_close(
                        view.log_prob, view.rows.extras["log_prob"], atol=1e-5, rtol=0
                    )
                    torch.testing.assert_close(
                        view.values, view.rows.extras["value"], atol=1e-5, rtol=0
                    )
            replayed.append(learner.rollout.columns["extras"]["episode_start"].copy())
            return learn(clock)

        learner.learn_block = replay_then_learn
        graph.train_and_act(EnvironmentSteps(2 * 2 * 2 * agent.rollout.length))
        assert len(replayed) == 2 and agent.rollout.num_envs == 4
        assert replayed[0][0].all()  # every worker copy starts fresh
        assert not replayed[1][0].all()  # and goes on across blocks with its state
    finally:
        graph.close()


def test_recurrent_q_workers_fill_the_sequence_replay_with_their_own_states(
    tmp_path: Path,
) -> None:
    graph = _graph("CartPoleNoVel_R2D2", tmp_path, num_envs=2)
    try:
        graph.heatup(EnvironmentSteps(800))  # the workers act with the learner's weights
        memory, net = graph.agents["agent"].memory, graph.agents["agent"].networks["main"]
        assert set(memory.windows) == {1, 2} and memory.size > 8
        columns = memory.columns
        states = columns[("state", "observation")][: memory.size]
        hidden = columns[("extras", "hidden.main")][: memory.size]
        starts = columns[("extras", "episode_start")][: memory.size]
        period = memory.period
        # A copy's next sequence begins where this one's first period ends: unrolled from
        # the state stored with it, the learner arrives at the state the worker stored next.
        compared = 0
        for slot in range(memory.size):
            tail = states[slot, period:]
            following = [
                other for other in range(memory.size)
                if np.array_equal(states[other, : len(tail)], tail)
            ]  # fmt: skip
            if len(following) != 1 or starts[following[0], 0]:
                continue
            with torch.no_grad():
                _, after = net.unroll(
                    {"observation": torch.as_tensor(states[slot, :period, None])},
                    torch.as_tensor(hidden[slot])[None],
                    torch.as_tensor(starts[slot, :period, None]),
                )
            np.testing.assert_allclose(after[0].numpy(), hidden[following[0]], atol=1e-5)
            compared += 1
        assert compared >= 4
        # The learner evaluates in its own copies while the workers' episodes go on.
        graph.train_and_act(EnvironmentSteps(600))
        graph.evaluate(EnvironmentEpisodes(2))
        graph.train_and_act(EnvironmentSteps(600))
        assert graph.agents["agent"].training_steps > 0 and set(memory.windows) == {1, 2}
    finally:
        graph.close()


def test_the_local_ray_runtimes_workers_run_at_the_learners_priority(ray_runtime: Any) -> None:
    # At Ray's own niceness of 15 they would wait for every busy process on the machine.
    @ray_runtime.remote
    def niceness() -> int:
        return os.nice(0)

    assert ray_runtime.get(niceness.remote()) == os.nice(0)


@pytest.mark.parametrize("backend", ["local", "ray"])
@pytest.mark.usefixtures("backend_up")
def test_a_killed_worker_is_restarted_and_the_run_completes(backend: str, tmp_path: Path) -> None:
    graph = _graph("CartPole_DQN", tmp_path, backend=backend, block_steps=50)
    try:
        graph.heatup(EnvironmentSteps(200))
        before = graph.worker_pids()
        os.kill(before[1], signal.SIGKILL)
        graph.train_and_act(EnvironmentSteps(1000))
        after = graph.worker_pids()
        assert after[1] != before[1] and after[2] == before[2]
        assert graph.pool is not None and graph.pool.restarts == 1
        assert (
            graph.env_steps >= 1200 and len(graph.agents["agent"].memory) == graph.collected_steps
        )
    finally:
        graph.close()
    log = (tmp_path / "log.txt").read_text()
    assert f"worker 1 (pid {before[1]}) died" in log and f"as pid {after[1]}" in log


def test_the_evaluation_worker_evaluates_while_training_goes_on(tmp_path: Path) -> None:
    graph = _graph("CartPole_DQN", tmp_path, evaluation_worker=True, block_steps=50)
    schedule = graph.schedule_params
    schedule.heatup_steps = EnvironmentSteps(200)
    schedule.improve_steps = EnvironmentSteps(1200)
    schedule.steps_between_evaluation_periods = EnvironmentSteps(400)
    schedule.evaluation_steps = EnvironmentEpisodes(3)
    try:
        graph.improve()
        assert 0 in graph.worker_pids()
        evaluations = graph.evaluations
        assert evaluations and all(len(e.rewards) == 3 for e in evaluations)
        # Each is stamped with the training clock at which it was asked for.
        assert [e.env_steps for e in evaluations] == sorted(e.env_steps for e in evaluations)
        assert graph.environment is not None and graph.environment.total_steps == 0
    finally:
        graph.close()
    assert _scalars(tmp_path, "graph", "Evaluation/mean_reward")


def test_a_checkpoint_carries_the_workers_counts(tmp_path: Path) -> None:
    graph = _graph("CartPole_DQN", tmp_path, block_steps=50)
    try:
        graph.heatup(EnvironmentSteps(300))
        graph.train_and_act(EnvironmentSteps(300))
        path = graph.save_checkpoint()
        steps, episodes = graph.collected_steps, graph.collected_episodes
    finally:
        graph.close()
    assert path is not None
    from coach.checkpoints import load_checkpoint

    state = load_checkpoint(path)
    resumed = load_preset("CartPole_DQN").graph_manager
    again = DistributedGraphManager(resumed, DistributedParameters(num_workers=1))
    again.create_graph(RunContext(seed=0, experiment_dir=tmp_path, quiet=True, resume=state))
    try:
        assert (again.collected_steps, again.collected_episodes) == (steps, episodes)
        assert again.env_steps == steps
        again.train_and_act(EnvironmentSteps(100))
        assert again.env_steps >= steps + 100
    finally:
        again.close()


@pytest.mark.parametrize(
    ("preset", "params", "message"),
    [
        ("Pendulum_HAC", {}, "one agent"),
        ("CartPole_DQN", {"num_workers": 0}, "at least one worker"),
        ("CartPole_DQN", {"backend": "mpi"}, "unknown backend 'mpi'"),
        ("CartPole_DQN", {"ray_address": "auto"}, "--ray-address goes with --backend ray"),
    ],
)
def test_what_cannot_run_on_workers_is_refused(
    preset: str, params: dict[str, object], message: str
) -> None:
    graph = load_preset(preset).graph_manager
    with pytest.raises(CoachError, match=message):
        DistributedGraphManager(graph, DistributedParameters(**params))  # type: ignore[arg-type]


def test_hindsight_replay_takes_whole_episodes_from_each_worker(tmp_path: Path) -> None:
    graph = _graph("BitFlip_DQN_HER", tmp_path, block_steps=7)  # blocks end mid-episode
    try:
        graph.heatup(EnvironmentSteps(300))
        memory = graph.agents["agent"].memory
        k = memory.k
        rows = memory.get(np.arange(len(memory)))
        # Every stored episode is one worker's, its steps in order: each state is the
        # previous next state, though the two workers' blocks arrived interleaved.
        episodes = position = 0
        while position < len(memory):
            start = position
            while not (rows.terminated[position] or rows.truncated[position]):
                position += 1
            length = position - start + 1
            for t in range(start + 1, position + 1):
                np.testing.assert_array_equal(
                    rows.states["observation"][t], rows.next_states["observation"][t - 1]
                )
            position += 1 + length * k  # the episode's hindsight copies follow it
            episodes += 1
        assert episodes == graph.collected_episodes > 2  # every finished episode, once
    finally:
        graph.close()


def test_workers_are_seeded_apart(tmp_path: Path) -> None:
    graph = _graph("CartPole_DQN", tmp_path, num_envs=2)
    try:
        assert graph.pool is not None
        seeds = {rank: graph.pool.make_spec(rank, 0).seed for rank in (1, 2)}
        restart = graph.pool.make_spec(1, 1).seed
        # Copy i of a worker is seeded seed + i: no copy shares a seed with another, the
        # learner's own (0 and 1) included, nor with a restarted worker's.
        copies = [s + i for s in (0, *seeds.values(), restart) for i in range(2)]
        assert len(set(copies)) == len(copies)
        graph.heatup(EnvironmentSteps(40))
        first = np.unique(graph.agents["agent"].memory.states["observation"][:40], axis=0)
        assert len(first) == 40  # no two workers' copies repeat each other
    finally:
        graph.close()


def test_workers_and_learner_keep_the_normalization_statistics_in_step(tmp_path: Path) -> None:
    graph = load_preset("CartPole_ClippedPPO").graph_manager
    graph.env_params.num_envs = 2
    graph.agent_params.input_filter = InputFilter(
        observation_filters={"observation": [ObservationNormalizationFilter()]}
    )
    _fit_minibatch(graph, workers=2)
    distributed = DistributedGraphManager(graph, DistributedParameters(num_workers=2))
    distributed.create_graph(RunContext(seed=0, experiment_dir=tmp_path, quiet=True))
    try:
        distributed.train_and_act(
            EnvironmentSteps(3 * 2 * 2 * distributed.agents["agent"].rollout.length)
        )
        (stats,) = distributed.agents["agent"].input_filter.running_statistics()
        # Every observation a worker's filter took in went into the learner's statistics:
        # the next observation of each step.
        assert stats.count == distributed.collected_steps
        stored = distributed.agents["agent"].rollout.columns["states"]["observation"]
        assert np.all(np.abs(stored) <= 5.0) and abs(float(stored.mean())) < 1.0
        distributed.evaluate(EnvironmentEpisodes(2))  # the learner acts on what it learned
        assert stats.count == distributed.collected_steps  # evaluation learns nothing
    finally:
        distributed.close()


def test_an_error_in_a_worker_stops_the_run_with_the_workers_message(tmp_path: Path) -> None:
    graph = load_preset("CartPole_DQN").graph_manager
    graph.env_params.level = "tests.toys:FailingEnv"
    graph.env_params.kwargs = {"fail_at": 30}
    distributed = DistributedGraphManager(graph, DistributedParameters(num_workers=2))
    distributed.create_graph(RunContext(seed=0, experiment_dir=tmp_path, quiet=True))
    try:
        with pytest.raises(WorkerFailed, match=r"worker [12] failed: (?s:.*)the simulator crashed"):
            distributed.heatup(EnvironmentSteps(500))
        assert distributed.pool is not None and distributed.pool.restarts == 0  # not a death
    finally:
        distributed.close()


def test_a_terminal_shows_the_training_bar_of_a_distributed_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    console = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", console)
    monkeypatch.setenv("COLUMNS", "121")
    monkeypatch.delenv("TERM", raising=False)
    preset = load_preset("CartPole_DQN").graph_manager
    schedule = preset.schedule_params
    schedule.heatup_steps = EnvironmentSteps(100)
    schedule.improve_steps = EnvironmentSteps(300)
    schedule.steps_between_evaluation_periods = EnvironmentSteps(300)
    schedule.evaluation_steps = EnvironmentEpisodes(1)
    graph = DistributedGraphManager(preset, DistributedParameters(num_workers=1, block_steps=50))
    graph.create_graph(RunContext(seed=0, experiment_dir=tmp_path))
    try:
        graph.improve()
    finally:
        graph.close()
    frames = console.getvalue().split("\r")
    assert any(f.startswith("heatup   100% |") and "100/100 env steps" in f for f in frames)
    assert any(f.startswith("evaluate 100% |") and "1/1 episodes" in f for f in frames)
    assert any(f.startswith("train    100% |") and "300/300 env steps" in f for f in frames)
