"""Unit tests for coach/parallel/worker.py: a rollout worker in this process, on real
environments: what its blocks hold, policy snapshots, and the evaluation it runs."""

from __future__ import annotations

import copy
import itertools

import numpy as np
import pytest
import torch

from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentEpisodes
from coach.core.types import Transition
from coach.errors import CoachError
from coach.parallel.worker import Outbox, PolicySnapshot, RolloutWorker, WorkerSpec, unpack
from coach.presets import load_preset


def _worker(preset: str, seed: int = 1, num_envs: int | None = None) -> RolloutWorker:
    graph = load_preset(preset).graph_manager
    if num_envs is not None:
        graph.env_params.num_envs = num_envs
    return RolloutWorker(WorkerSpec(graph.acting_graph(), seed=seed, rank=1))


def test_a_block_holds_every_stored_step_and_the_finished_episodes() -> None:
    worker = _worker("CartPole_DQN")
    block = worker.collect(300, RunPhase.HEATUP)
    assert block.rank == 1 and block.phase is RunPhase.HEATUP and block.env_steps == 300
    calls = unpack(*_steps(block))
    assert len(calls) == 300 and all(len(c.reward) == 1 for c in calls)
    # Consecutive steps chain: each state is the previous next state, unless an episode ended.
    for before, after in itertools.pairwise(calls):
        if not (before.terminated[0] or before.truncated[0]):
            np.testing.assert_array_equal(
                after.state["observation"], before.next_state["observation"]
            )
    ends = sum(bool(c.terminated[0] or c.truncated[0]) for c in calls)
    assert len(block.episodes) == ends > 0
    assert sum(length for _, length, _ in block.episodes) <= 300
    assert len(worker.outboxes["agent"]) == 0  # drained into the block
    worker.close()


def test_on_policy_blocks_carry_the_rollout_columns_of_every_copy() -> None:
    worker = _worker("CartPole_ClippedPPO", num_envs=3)
    heatup = worker.collect(30, RunPhase.HEATUP)
    assert heatup.agents["agent"].widths == []  # on-policy agents keep nothing from random steps
    block = worker.collect(3 * 16, RunPhase.TRAIN)
    calls = unpack(*_steps(block))
    assert [len(c.reward) for c in calls] == [3] * 16
    assert set(calls[0].extras) == {"value", "log_prob"}
    worker.close()


def test_the_outbox_gives_back_each_store_call_as_it_was() -> None:
    outbox = Outbox()
    rng = np.random.default_rng(0)
    calls = []
    for width in (1, 3, 2) * 30:  # past the first columns' room: they grow
        call = {
            "state": {"observation": rng.random((width, 4)).astype(np.float32)},
            "action": rng.integers(0, 2, width),
            "reward": rng.random(width).astype(np.float32),
            "next_state": {"observation": rng.random((width, 4)).astype(np.float32)},
            "terminated": rng.random(width) < 0.5,
            "truncated": np.zeros(width, dtype=bool),
            "extras": {"log_prob": rng.random(width).astype(np.float32)},
        }
        outbox.store(Transition(**call))
        calls.append(copy.deepcopy(call))
        call["state"]["observation"][:] = -1  # the agent reuses its arrays: stored copies
    assert len(outbox) == 180
    columns, widths = outbox.drain()
    assert widths == [1, 3, 2] * 30 and columns[("reward", "")].shape == (180,)
    assert len(outbox) == 0 and outbox.drain() == ({}, [])
    for original, restored in zip(calls, unpack(columns, widths), strict=True):
        for name in ("action", "reward", "terminated", "truncated"):
            np.testing.assert_array_equal(original[name], getattr(restored, name))
            assert getattr(restored, name).dtype == original[name].dtype
        for name in ("state", "next_state", "extras"):
            for key in original[name]:
                np.testing.assert_array_equal(original[name][key], getattr(restored, name)[key])
    outbox.store(Transition(**calls[0]))
    with pytest.raises(CoachError, match="must not change"):
        outbox.store(Transition(**{**calls[0], "extras": {}}))
    with pytest.raises(CoachError, match="does not learn"):
        outbox.sample(1)


def test_a_snapshot_makes_the_worker_act_like_the_learner() -> None:
    learner = _worker("CartPole_DQN", seed=0)
    worker = _worker("CartPole_DQN", seed=5)
    state = {"observation": np.random.default_rng(0).random((8, 4)).astype(np.float32)}
    with torch.no_grad():
        for net in learner.agent.networks.values():
            for parameter in net.online.parameters():
                parameter.add_(0.5)
    learner.agent.exploration.steps = 12_345
    before = worker.agent.networks["main"].online(worker.agent.policy.tensors(state))["q"]
    worker.collect(10, RunPhase.TRAIN, PolicySnapshot(3, learner.level.policy_state()))
    assert worker.version == 3 and worker.agent.exploration.steps >= 12_345
    mine = worker.agent.networks["main"].online(worker.agent.policy.tensors(state))["q"]
    theirs = learner.agent.networks["main"].online(learner.agent.policy.tensors(state))["q"]
    assert torch.equal(mine, theirs) and not torch.equal(mine, before)
    learner.close()
    worker.close()


def test_different_seeds_give_different_episodes() -> None:
    first, second = _worker("CartPole_DQN", seed=1), _worker("CartPole_DQN", seed=2)
    a = unpack(*_steps(first.collect(50, RunPhase.HEATUP)))
    b = unpack(*_steps(second.collect(50, RunPhase.HEATUP)))
    assert not np.array_equal(a[0].state["observation"], b[0].state["observation"])
    again = _worker("CartPole_DQN", seed=1)
    c = unpack(*_steps(again.collect(50, RunPhase.HEATUP)))
    for x, y in zip(a, c, strict=True):
        np.testing.assert_array_equal(x.next_state["observation"], y.next_state["observation"])
        np.testing.assert_array_equal(x.action, y.action)
    for worker in (first, second, again):
        worker.close()


def _steps(block):  # type: ignore[no-untyped-def]
    """The steps and widths of a block of a one-agent level (its agent is named "agent")."""
    return block.agents["agent"].steps, block.agents["agent"].widths


def test_the_evaluation_worker_runs_whole_greedy_episodes() -> None:
    worker = _worker("CartPole_DQN", num_envs=2)
    learner = _worker("CartPole_DQN", seed=0)
    snapshot = PolicySnapshot(0, learner.level.policy_state())
    result = worker.evaluate(EnvironmentEpisodes(5), snapshot)
    assert len(result.rewards) == len(result.lengths) == 5
    assert all(
        reward == length for reward, length in zip(result.rewards, result.lengths, strict=False)
    )
    assert len(worker.outboxes["agent"]) == 0  # nothing stored while evaluating
    worker.close()
    learner.close()
