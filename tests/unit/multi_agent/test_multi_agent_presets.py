"""Every multi-agent preset is deterministic (the same seed gives the same weights, another
seed others), and a checkpoint of several agents and of self-play's pool restores into a
run that goes on exactly as the one it was taken from."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch

from coach.core.step_units import EnvironmentSteps
from coach.graph_managers.graph_manager import GraphManager
from coach.graph_managers.parameters import RunContext
from coach.parameters import set_parameter
from coach.presets import load_preset

SHORT: dict[str, dict[str, str]] = {
    "SimpleSpread_SharedPPO": {
        "environment.num_envs": "2",
        "agents.spread.memory.rollout_length": "25",
        "agents.spread.algorithm.batch_size": "50",
    },
    "SimpleSpread_IndependentPPO": {
        "environment.num_envs": "2",
        **{f"agents.agent_{k}.memory.rollout_length": "25" for k in range(3)},
        **{f"agents.agent_{k}.algorithm.batch_size": "25" for k in range(3)},
    },
    "TicTacToe_SelfPlay_DQN": {
        "environment.num_envs": "2",
        "self_play.snapshot_every": "EnvironmentSteps(100)",
        "self_play.pool_size": "3",
    },
    "TicTacToe_SelfPlay_ClippedPPO": {
        "environment.num_envs": "2",
        "agents.player.memory.rollout_length": "8",
        "agents.player.algorithm.batch_size": "16",
        "self_play.snapshot_every": "EnvironmentSteps(100)",
        "self_play.pool_size": "3",
    },
    "SimpleTag_DQN_vs_ClippedPPO": {
        "environment.num_envs": "2",
        "agents.prey.memory.rollout_length": "25",
        "agents.prey.algorithm.batch_size": "25",
        "agents.predators.algorithm.num_consecutive_playing_steps": "EnvironmentSteps(24)",
    },
}


def _graph(name: str, seed: int, directory: Path | None = None) -> GraphManager:
    graph = load_preset(name).graph_manager
    roots = graph.parameters()
    for path, value in SHORT[name].items():
        set_parameter(roots, path, value)
    return graph.create_graph(RunContext(seed=seed, experiment_dir=directory, quiet=True))


def _weights(graph: GraphManager) -> list[torch.Tensor]:
    return [
        p.detach().clone()
        for agent in graph.levels[0].agents.values()
        for network in agent.networks.values()
        for p in network.online.parameters()
    ]


def _train(graph: GraphManager, steps: int = 300) -> list[torch.Tensor]:
    graph.heatup(EnvironmentSteps(100))
    graph.train_and_act(EnvironmentSteps(steps))
    assert graph.training_steps > 0
    return _weights(graph)


@pytest.mark.parametrize("name", list(SHORT))
def test_the_same_seed_gives_the_same_weights(name: str) -> None:
    runs = []
    for seed in (3, 3, 4):
        graph = _graph(name, seed)
        try:
            runs.append(_train(graph))
        finally:
            graph.close()
    same, other = runs[1], runs[2]
    assert all(torch.equal(a, b) for a, b in zip(runs[0], same, strict=True))
    assert not all(torch.equal(a, b) for a, b in zip(runs[0], other, strict=True))


@pytest.mark.parametrize(
    "name",
    ["SimpleSpread_IndependentPPO", "TicTacToe_SelfPlay_DQN", "TicTacToe_SelfPlay_ClippedPPO"],
)
def test_a_restored_checkpoint_goes_on_like_the_run_it_was_taken_from(
    name: str, tmp_path: Path
) -> None:
    original = _graph(name, 5, tmp_path / "a")
    try:
        _train(original, 1000)  # self-play: more snapshots than the pool keeps
        # A copy, as a checkpoint file is: the state holds the live tensors.
        if name == "TicTacToe_SelfPlay_ClippedPPO":  # taken mid-block, its columns uneven
            rollout = original.levels[0].agents["player"].rollout  # type: ignore[attr-defined]
            for _ in range(20):
                if rollout.stored and not rollout.aligned:
                    break
                original.train_and_act(EnvironmentSteps(2))  # one move in each copy
            assert rollout.stored and not rollout.aligned
        state = copy.deepcopy(original.state_dict(include_memory=True))
        if name.startswith("TicTacToe"):  # self-play (PPO: a block of uneven columns too)
            pool = original.levels[0].opponents  # type: ignore[attr-defined]
            assert len(pool.snapshots) == 3  # the pool is bounded, and saved
            saved = list(pool.snapshot_steps)
        original.train_and_act(EnvironmentSteps(200))
        expected = _weights(original)
    finally:
        original.close()
    restored = _graph(name, 5, tmp_path / "b")
    try:
        restored.load_state_dict(state)
        if name.startswith("TicTacToe"):
            mine = restored.levels[0].opponents  # type: ignore[attr-defined]
            assert mine.snapshot_steps == saved
        restored.train_and_act(EnvironmentSteps(200))
        assert all(torch.equal(a, b) for a, b in zip(expected, _weights(restored), strict=True))
    finally:
        restored.close()
