"""Unit tests for coach/parallel/asynchronous.py and the modules under it (hogwild.py,
parameter_holder.py, asynchronous_worker.py): real worker processes (and a real local Ray
runtime) training CartPole_A3C and CartPole_NStepQ_Async, and the ``coach`` command."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from coach.checkpoints import BEST
from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps
from coach.errors import CoachError
from coach.graph_managers.parameters import RunContext
from coach.parallel.asynchronous import NOT_REPRODUCIBLE, AsynchronousGraphManager
from coach.parallel.asynchronous_worker import AsynchronousLevel, AsynchronousWorker
from coach.parallel.hogwild import ENV_STEPS, EPISODES, SharedWeights
from coach.parallel.worker import WorkerSpec
from coach.parameters import set_parameter
from coach.presets import load_preset
from tests.integration.coach_cli import coach, experiment, refused, rewards


def _graph(
    preset: str, tmp_path: Path, overrides: tuple[str, ...] = (), **params: Any
) -> AsynchronousGraphManager:
    """The preset's graph, built, its workers (``parallel``) set as ``params`` say."""
    graph = load_preset(preset).graph_manager
    assert isinstance(graph, AsynchronousGraphManager)
    for override in overrides:
        set_parameter(graph.parameters(), *override.split("=", 1))
    for name, value in params.items():
        setattr(graph.params, name, value)
    return graph.create_graph(RunContext(seed=0, experiment_dir=tmp_path, quiet=True))


def _weights(graph: AsynchronousGraphManager) -> list[torch.Tensor]:
    networks = graph.agent.networks.values()
    return [p.detach().clone() for net in networks for p in net.online.parameters()]


def _killing(graph: AsynchronousGraphManager, kill: Callable[[], None], after: int) -> None:
    """Make ``graph`` call ``kill`` once, after it has taken ``after`` worker reports."""
    take, taken = graph._take, [0]

    def counting(rank: int, progress: Any) -> None:
        take(rank, progress)
        taken[0] += 1
        if taken[0] == after:
            kill()

    graph._take = counting  # type: ignore[method-assign]


def test_each_workers_gradients_reach_the_shared_weights(tmp_path: Path) -> None:
    graph = _graph("CartPole_A3C", tmp_path)
    try:
        pool = graph.start_workers()
        server = graph.server
        assert isinstance(server, SharedWeights)
        networks = list(graph.agent.networks)
        for net in graph.agent.networks.values():  # this process holds the shared tensors
            assert all(p.is_shared() for p in net.online.parameters())
        assert graph.worker_updates() == {r: dict.fromkeys(networks, 0) for r in (1, 2)}
        for rank, other in ((1, 2), (2, 1)):
            before, counts = _weights(graph), graph.worker_updates()
            pool.submit(rank, "collect", 50, RunPhase.TRAIN, None)
            done, progress = pool.next_result()
            assert done == rank and progress.gradient_steps == 10  # a block of 5 steps each
            after = graph.worker_updates()
            # Counted in shared memory by the worker that applied them, one per network step.
            assert after[rank] == {n: counts[rank][n] + 10 for n in networks}
            assert after[other] == counts[other]
            # And this process sees the weights that worker's gradients moved.
            assert all(not torch.equal(a, b) for a, b in zip(before, _weights(graph), strict=True))
        # Both at once, through the run's own loop: the budget is met exactly.
        graph.train_and_act(EnvironmentSteps(600))
        assert graph.env_steps == graph.collected_steps == 600
        updates = graph.worker_updates()
        assert all(updates[r][n] > 10 for r in (1, 2) for n in networks)
        assert graph.agent.training_steps == sum(u["actor"] for u in updates.values()) - 20
        result = graph.evaluate(EnvironmentEpisodes(2))  # the shared weights, here
        assert len(result.rewards) == 2
    finally:
        graph.close()
    log = (tmp_path / "log.txt").read_text()
    assert log.count(NOT_REPRODUCIBLE) == 1


@pytest.mark.parametrize(
    ("preset", "clock", "other"),
    [("CartPole_A3C", "episodes", 40), ("CartPole_NStepQ_Async", "env_steps", 400)],
)
def test_a_workers_learning_rate_follows_the_whole_runs_clock(
    tmp_path: Path, preset: str, clock: str, other: int
) -> None:
    # A decay over 100 episodes (1,000 env steps) of the run: another worker's count on the
    # shared clock runs this worker's rate down as far as its own would.
    length = 100 if clock == "episodes" else 1000
    overrides = (
        f"agent.algorithm.learning_rate_decay=LinearSchedule(1.0, 0.0, {length})",
        f"agent.algorithm.learning_rate_clock={clock}",
    )
    graph = _graph(preset, tmp_path, overrides)
    try:
        server = SharedWeights(graph.agent, 2, None, episodes=3)
        level = AsynchronousLevel(graph.acting.agent_params, graph.acting.env_params, server)
        worker = AsynchronousWorker(WorkerSpec(graph=level, seed=11, rank=1))
        column = EPISODES if clock == "episodes" else ENV_STEPS
        server.counters[2, column] = other  # worker 2's, so far
        progress = worker.collect(200, RunPhase.TRAIN)
        assert progress.gradient_steps > 0
        run, episodes = server.clock(), len(progress.episodes)
        others = (0, other) if clock == "episodes" else (other, 0)  # worker 2's steps, episodes
        assert (run.training_env_steps, run.episodes) == (200 + others[0], 3 + episodes + others[1])
        own = worker.agent.clock()
        assert own.training_env_steps == 200 and own.episodes == len(progress.episodes)
        # Each rate is its network's own (1e-3, 5e-4) times the decay at the run's count of
        # the last round: at least the count the round saw before, at most the one after.
        for name, network in worker.agent.networks.items():
            assert network.optimizer is not None
            own_rate = graph.acting.agent_params.network_wrappers[name].learning_rate
            factor = network.optimizer.param_groups[0]["lr"] / own_rate
            assert 1 - run.count(clock) / length <= factor + 1e-12
            assert factor <= 1 - (3 * (clock == "episodes") + other) / length + 1e-12
            mine = 1 - own.count(clock) / length  # what its own clock would have given
            assert factor < mine - 0.3
        worker.close()
    finally:
        graph.close()


def test_a_killed_worker_is_restarted_with_a_fresh_seed_and_training_finishes(
    tmp_path: Path,
) -> None:
    schedule = (
        "schedule.improve_steps=EnvironmentSteps(1500)",
        "schedule.steps_between_evaluation_periods=EnvironmentSteps(750)",
        "schedule.evaluation_steps=EnvironmentEpisodes(1)",
        "agent.algorithm.num_steps_between_copying_online_weights_to_target=EnvironmentSteps(300)",
    )
    graph = _graph("CartPole_NStepQ_Async", tmp_path, schedule, num_workers=2)
    killed: list[int] = []

    def kill() -> None:
        killed.append(graph.worker_pids()[1])
        os.kill(killed[0], signal.SIGKILL)

    _killing(graph, kill, after=2)
    try:
        graph.improve()
        pids = graph.worker_pids()
        assert graph.pool is not None and graph.pool.restarts == 1 and pids[1] != killed[0]
        assert graph.env_steps == 1500 and len(graph.evaluations) == 2
        server = graph.server
        assert isinstance(server, SharedWeights)
        updates = server.updates()
        assert updates[1]["main"] > 0 and updates[2]["main"] > 0
        # The shared target is refreshed on the global clock, every `period` training env
        # steps the workers counted (the killed worker's lost steps included), at the
        # gradient step that comes due: the last steps (a block per worker) may await theirs.
        period = server.targets.period if server.targets is not None else 0
        counted = int(server.counters[:, 0].sum())
        assert period == 300 and counted >= 1500
        assert (counted - 2 * 5) // period <= int(server.refreshes[0]) <= counted // period
    finally:
        graph.close()
    log = (tmp_path / "log.txt").read_text()
    # Copy i of worker r is seeded seed + (r + start * 3) * num_envs + i: its second start, 4.
    assert f"worker 1 (pid {killed[0]}) died" in log and f"as pid {pids[1]} with seed 4" in log
    assert "final epsilons drawn for the workers (worker 1: " in log


def test_workers_on_ray_send_gradients_to_the_parameter_holder(
    tmp_path: Path, ray_runtime: Any
) -> None:
    ray = ray_runtime  # the module's runtime, as Coach starts its own: the graph joins it
    decay = "agent.algorithm.learning_rate_decay=LinearSchedule(1.0, 0.0, 400)"
    clock = "agent.algorithm.learning_rate_clock=env_steps"
    graph = _graph("CartPole_A3C", tmp_path, (decay, clock), backend="ray")
    killed: list[Any] = []

    def kill() -> None:
        assert graph.pool is not None
        killed.append(graph.worker_pids()[1])
        ray.kill(graph.pool.actors[1], no_restart=True)  # type: ignore[attr-defined]

    _killing(graph, kill, after=2)
    initial = _weights(graph)
    try:
        graph.train_and_act(EnvironmentSteps(400))
        assert graph.env_steps == 400 and graph.pool is not None
        assert graph.pool.restarts == 1 and graph.worker_pids()[1] != killed[0]
        updates = graph.worker_updates()
        assert all(updates[r][n] > 0 for r in (1, 2) for n in ("actor", "critic"))
        # The killed worker's last gradient steps reached the holder, but its call was
        # given again to its successor and counted once, with that one's report.
        assert 0 < graph.agent.training_steps <= sum(u["actor"] for u in updates.values())
        # The holder has the weights; they come back here for checkpoints and evaluations.
        same = zip(initial, _weights(graph), strict=True)
        assert all(torch.equal(a, b) for a, b in same)
        assert graph.save_checkpoint() is not None
        moved = zip(initial, _weights(graph), strict=True)
        assert all(not torch.equal(a, b) for a, b in moved)
        # The workers ran the rate down on the run's 400 steps, not on their own ~200:
        # the holder's optimizers (read back with the weights) took it at the last step.
        for network in graph.agent.networks.values():
            assert network.optimizer is not None
            assert network.optimizer.param_groups[0]["lr"] < 0.25 * 1e-3
        assert graph.evaluate(EnvironmentEpisodes(1)).rewards
    finally:
        graph.close()
    assert ray.is_initialized()  # the runtime was not the graph's: left running
    log = (tmp_path / "log.txt").read_text()
    assert "on the ray backend" in log and f"worker 1 (pid {killed[0]}) died" in log


def test_coach_runs_an_asynchronous_preset(tmp_path: Path) -> None:
    budget = "schedule.improve_steps=EnvironmentSteps(2000)"
    result = coach("-p", "CartPole_A3C", "-n", "2", "--seed", "3", "-cp", budget, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    run = experiment(tmp_path / "experiments", "CartPole_A3C")
    log = (run / "log.txt").read_text()
    assert log.count(NOT_REPRODUCIBLE) == 1 and result.stdout.count(NOT_REPRODUCIBLE) == 1
    assert "2 asynchronous workers on the local backend" in log and "done:" in log
    rows = rewards(run)
    assert {"train", "evaluate"} <= {phase for phase, _, _ in rows}
    assert max(int(steps) for _, steps, _ in rows) >= 2000
    assert (run / "checkpoints" / BEST).is_file() and (run / "checkpoints" / "latest").is_file()
    assert {"graph", "main_level.agent", "worker_1", "worker_2"} <= {
        p.name for p in (run / "tensorboard").iterdir()
    }
    assert "parallel.num_workers: 2" in (run / "params.yaml").read_text()


def test_what_cannot_learn_asynchronously_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    preset = tmp_path / "CartPole_DQN_Async.py"
    preset.write_text(
        "from coach.parallel.asynchronous import AsynchronousGraphManager\n"
        "from coach.presets import load_preset\n"
        "graph_manager = AsynchronousGraphManager(load_preset('CartPole_DQN').graph_manager)\n"
    )
    line = refused(["-p", str(preset), "-ep", str(tmp_path / "runs")], capsys)
    assert "learn from their own fresh rollouts" in line and "ExperienceReplayParameters" in line
    assert not (tmp_path / "runs").exists()
    line = refused(["-p", "CartPole_A3C", "-ew"], capsys)
    assert "-ew evaluates beside rollout workers" in line
    with pytest.raises(CoachError, match="presets of one agent"):
        AsynchronousGraphManager(load_preset("Pendulum_HAC").graph_manager)
