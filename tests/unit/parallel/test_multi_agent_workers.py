"""Multi-agent presets on rollout workers (`coach.parallel.distributed`): each worker builds
the preset's whole multi-agent level to act only, and its blocks carry every agent's steps
to the learner's agents; self-play's pool of snapshots travels with the policy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from gymnasium import spaces

from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps
from coach.graph_managers.parameters import RunContext
from coach.parallel.distributed import DistributedGraphManager
from coach.parallel.parameters import DistributedParameters
from coach.parallel.worker import PolicySnapshot, RolloutWorker, WorkerSpec
from coach.parameters import set_parameter
from coach.presets import load_preset

SPREAD = {
    "environment.num_envs": "1",
    "agents.spread.memory.rollout_length": "25",
    "agents.spread.algorithm.batch_size": "150",
}
"""Two workers' blocks of 25 steps of one copy, 3 ids each: a minibatch of all 150 rows."""


def _spread(tmp_path: Path, backend: str, seed: int = 0) -> DistributedGraphManager:
    graph = load_preset("SimpleSpread_SharedPPO").graph_manager
    roots = graph.parameters()
    for path, value in SPREAD.items():
        set_parameter(roots, path, value)
    distributed = DistributedGraphManager(
        graph, DistributedParameters(num_workers=2, backend=backend)
    )
    return distributed.create_graph(RunContext(seed=seed, experiment_dir=tmp_path, quiet=True))


@pytest.mark.parametrize("backend", ["local", "ray"])
@pytest.mark.usefixtures("backend_up")
def test_a_shared_agent_learns_from_the_blocks_of_every_worker(
    tmp_path: Path, backend: str
) -> None:
    graph = _spread(tmp_path, backend)
    try:
        graph.train_and_act(EnvironmentSteps(100))  # two rounds of a block from each worker
        agent = graph.agents["spread"]
        assert graph.collected_steps == 100
        assert agent.training_env_steps == 3 * graph.collected_steps  # three ids a step
        assert agent.training_rounds == 2 and agent.training_steps > 0
        result = graph.evaluate(EnvironmentEpisodes(2))  # in the learner's own copies
        assert len(result.rewards) == 2
    finally:
        graph.close()
    assert (tmp_path / "tensorboard" / "main_level.spread").is_dir()


def test_the_same_seed_gives_the_same_multi_agent_run_on_workers(tmp_path: Path) -> None:
    weights = []
    for run in ("a", "b"):
        graph = _spread(tmp_path / run, "local", seed=4)
        try:
            graph.train_and_act(EnvironmentSteps(100))
            network = graph.agents["spread"].networks["actor"].online
            weights.append([p.detach().clone() for p in network.parameters()])
        finally:
            graph.close()
    for a, b in zip(*weights, strict=True):
        assert torch.equal(a, b)


def test_self_play_workers_play_the_learners_pool(tmp_path: Path) -> None:
    graph = load_preset("TicTacToe_SelfPlay_DQN").graph_manager
    roots = graph.parameters()
    set_parameter(roots, "environment.num_envs", "2")
    set_parameter(roots, "self_play.snapshot_every", "EnvironmentSteps(100)")
    set_parameter(roots, "self_play.pool_size", "3")
    distributed = DistributedGraphManager(graph, DistributedParameters(num_workers=2))
    distributed.create_graph(RunContext(seed=0, experiment_dir=tmp_path, quiet=True))
    try:
        distributed.heatup(EnvironmentSteps(200))
        distributed.train_and_act(EnvironmentSteps(1500))
        level = distributed.levels[0]
        learner = level.agents["player"]
        assert len(learner.memory) > 0 and learner.training_steps > 0
        pool = level.opponents  # type: ignore[attr-defined]
        assert len(pool.snapshots) == 3  # taken by the learner, on its own training clock
        state = level.policy_state()
    finally:
        distributed.close()
    worker = RolloutWorker(WorkerSpec(graph.acting_graph(), seed=7, rank=1))
    try:
        worker.set_policy(PolicySnapshot(5, state))
        mine = worker.level.opponents  # type: ignore[attr-defined]
        assert mine.snapshot_steps == pool.snapshot_steps
        block = worker.collect(300, RunPhase.TRAIN)
        part = block.agents["player"]
        assert 0 < part.env_steps < 300  # the learner's moves only: about half of them
        assert part.widths and block.episodes
        assert np.isin([r for r, _, _ in block.episodes], [-1.0, 0.0, 1.0]).all()
    finally:
        worker.close()


@pytest.mark.parametrize("backend", ["local", "ray"])
@pytest.mark.usefixtures("backend_up")
def test_an_on_policy_learner_takes_turn_based_blocks_from_every_worker(
    tmp_path: Path, backend: str
) -> None:
    graph = load_preset("TicTacToe_SelfPlay_ClippedPPO").graph_manager
    roots = graph.parameters()
    set_parameter(roots, "environment.num_envs", "2")
    set_parameter(roots, "agents.player.memory.rollout_length", "8")
    set_parameter(roots, "agents.player.algorithm.batch_size", "32")
    distributed = DistributedGraphManager(
        graph, DistributedParameters(num_workers=2, backend=backend)
    )
    distributed.create_graph(RunContext(seed=0, experiment_dir=tmp_path, quiet=True))
    try:
        learner = distributed.levels[0].agents["player"]
        taken: list[np.ndarray] = []
        learn = learner.learner.learn_block

        def learn_block(clock: Any) -> Any:  # the block as it is learned from
            rollout = learner.rollout
            taken.append(rollout.columns["states"]["observation"][: rollout.steps].copy())
            taken.append(rollout.valid())
            return learn(clock)

        learner.learner.learn_block = learn_block
        distributed.train_and_act(EnvironmentSteps(400))
        assert learner.training_rounds >= 1 and learner.training_steps > 0
        states, valid = taken[0], taken[1]
        # 2 workers x 2 copies, the learner in one seat of each: 4 slots, each column the
        # moves of its slot (at its turns only: fewer than the level's steps)
        assert states.shape[1] == 4 and valid.sum() >= 8 * 4 and valid.any(axis=0).all()
    finally:
        distributed.close()


def test_a_workers_slots_keep_their_columns_in_the_learners_block() -> None:
    from coach.agents.clipped_ppo import ClippedPPOAgent, ClippedPPOAgentParameters
    from coach.core.types import Transition
    from coach.memories.memory import SLOT
    from coach.parallel.exchange import ingest_slots

    observation = spaces.Dict({"observation": spaces.Box(-1e6, 1e6, (1,), np.float32)})
    params = ClippedPPOAgentParameters()
    params.memory.rollout_length = 2
    agent = ClippedPPOAgent(params, observation, spaces.Discrete(2), num_envs=3, seed=0)

    def step(slots: list[int], rank: int) -> Transition:
        n = len(slots)
        state = np.array([[100 * rank + s] for s in slots], np.float32)
        return Transition(
            {"observation": state}, np.zeros(n, np.int64), np.zeros(n, np.float32),
            {"observation": state}, np.zeros(n, bool), np.zeros(n, bool),
            {"value": np.zeros(n, np.float32), "log_prob": np.zeros(n, np.float32),
             SLOT: np.array(slots)},
        )  # fmt: skip

    calls = {1: [step([0, 2], 1), step([1], 1)], 2: [step([2], 2)]}
    ingest_slots(agent, calls, 7, RunPhase.TRAIN, workers=3)
    rollout = agent.rollout
    assert rollout.num_envs == 9 and rollout.counts.tolist() == [1, 1, 1, 0, 0, 1, 0, 0, 0]
    assert rollout.columns["states"]["observation"][0, [0, 1, 2, 5], 0].tolist() == [
        100, 101, 102, 202,
    ]  # fmt: skip
    assert agent.training_env_steps == 7
