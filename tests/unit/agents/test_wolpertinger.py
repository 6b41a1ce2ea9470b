"""Wolpertinger (coach/agents/wolpertinger.py): the action embeddings, the k-nearest lookup
against brute force (sorted search in one dimension, NEC's tables in more, exact and
approximate), the critic's choice among the k, learning on embeddings, refusals, and
determinism."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from gymnasium import spaces

from coach.agents.wolpertinger import (
    INDEX_FROM,
    ActionNeighbours,
    WolpertingerAgent,
    WolpertingerAgentParameters,
    action_embeddings,
    choose,
)
from coach.core.run_phase import RunPhase
from coach.core.types import Batch
from coach.environments.parameters import GymEnvironmentParameters
from coach.errors import CoachError
from coach.filters.action import BoxDiscretization
from coach.filters.pipeline import OutputFilter
from coach.networks.parameters import MiddlewareParameters
from tests.unit.agents.seeded import after_run, short_schedule

CPU = torch.device("cpu")
OBSERVATIONS = spaces.Dict({"observation": spaces.Box(-1.0, 1.0, (3,), np.float32)})


def _brute_force(embeddings: np.ndarray, protos: np.ndarray, k: int) -> np.ndarray:
    distances = ((protos[:, None, :] - embeddings[None]) ** 2).sum(-1)
    return np.argsort(distances, axis=1, kind="stable")[:, :k]


def _params() -> WolpertingerAgentParameters:
    params = WolpertingerAgentParameters()
    for network in params.network_wrappers.values():
        network.middleware = MiddlewareParameters(scheme=[16])
    params.algorithm.batch_size = 8
    return params


def test_embeddings_of_a_box_discretization_and_of_plain_actions() -> None:
    discretization = BoxDiscretization([3, 2])
    output_filter = OutputFilter(action_filters=[discretization])
    output_filter.bind(
        spaces.Box(np.array([0.0, 10.0], np.float32), np.array([1.0, 20.0], np.float32))
    )
    expected = [[-1, -1], [-1, 1], [0, -1], [0, 1], [1, -1], [1, 1]]
    np.testing.assert_array_equal(action_embeddings(output_filter, 6), expected)
    np.testing.assert_allclose(action_embeddings(OutputFilter(), 5)[:, 0], [-1, -0.5, 0, 0.5, 1])
    assert action_embeddings(OutputFilter(), 1).tolist() == [[0.0]]


@pytest.mark.parametrize("k", [1, 3, 7])
def test_one_dimensional_lookup_against_brute_force(k: int) -> None:
    rng = np.random.default_rng(0)
    embeddings = np.sort(rng.uniform(-1, 1, (500, 1)).astype(np.float32), axis=0)
    embeddings[10] = embeddings[11]  # a tie: the lower action first
    embeddings = rng.permutation(embeddings)  # not in action order
    protos = np.concatenate([rng.uniform(-1.2, 1.2, (64, 1)), embeddings[:3]]).astype(np.float32)
    found = ActionNeighbours(embeddings, CPU, 0).nearest(torch.as_tensor(protos), k)
    np.testing.assert_array_equal(found.numpy(), _brute_force(embeddings, protos, k))


def test_a_million_actions_are_searched_exactly() -> None:
    embeddings = np.linspace(-1, 1, 1_000_000, dtype=np.float32)[:, None]
    protos = np.array([[-1.5], [-1.0], [0.1234567], [0.9999999], [2.0]], np.float32)
    found = ActionNeighbours(embeddings, CPU, 0).nearest(torch.as_tensor(protos), 2)
    distances = np.abs(embeddings[found.numpy(), 0] - protos)
    assert found[0].tolist() == [0, 1] and found[-1].tolist() == [999_999, 999_998]
    assert (distances[:, 0] <= distances[:, 1]).all()
    assert (distances[1:-1, 0] < 1.1e-6).all()  # inside the range: a grid point within 1e-6


def test_several_dimensions_exactly_and_by_index() -> None:
    rng = np.random.default_rng(1)
    small = rng.uniform(-1, 1, (300, 3)).astype(np.float32)
    protos = rng.uniform(-1, 1, (50, 3)).astype(np.float32)
    found = ActionNeighbours(small, CPU, 0).nearest(torch.as_tensor(protos), 4)
    np.testing.assert_array_equal(found.numpy(), _brute_force(small, protos, 4))
    pytest.importorskip("faiss")
    large = rng.uniform(-1, 1, (INDEX_FROM + 5000, 2)).astype(np.float32)
    neighbours = ActionNeighbours(large, CPU, 0)
    assert neighbours.table is not None and neighbours.table.index is not None  # faiss
    found = neighbours.nearest(torch.as_tensor(protos[:, :2]), 5).numpy()
    exact = _brute_force(large, protos[:, :2], 5)
    recall = np.mean([len(set(a) & set(b)) / 5 for a, b in zip(found, exact, strict=True)])
    assert recall >= 0.95


def test_the_critic_chooses_the_best_of_the_k() -> None:
    embeddings = torch.tensor([[-1.0], [-0.5], [0.0], [0.5], [1.0]])
    neighbours = torch.tensor([[2, 1, 3], [0, 1, 2]])
    states = {"observation": torch.tensor([[1.0], [-1.0]])}

    def critic(inputs: dict[str, torch.Tensor]) -> torch.Tensor:  # the best: a = s
        return -(inputs["action"][:, 0] - inputs["observation"][:, 0]).square()

    assert choose(critic, states, neighbours, embeddings).tolist() == [3, 0]


def test_acting_takes_the_critics_best_neighbour_of_the_proto_action() -> None:
    params = _params()
    params.algorithm.k = 5
    agent = WolpertingerAgent(params, OBSERVATIONS, spaces.Discrete(41), 1, seed=0)
    state = {"observation": np.array([[0.2, -0.1, 0.4]], np.float32)}
    action = agent.policy.decide(state, RunPhase.EVALUATE).action
    inputs = {"observation": torch.as_tensor(state["observation"])}
    with torch.no_grad():
        proto = agent.networks["actor"](inputs)["policy"]
        candidates = agent.neighbours.nearest(proto, 5)[0]
        embeddings = agent.neighbours.embeddings[candidates]
        tiled = inputs["observation"].expand(5, 3)
        values = agent.networks["critic"]({"observation": tiled, "action": embeddings})["q"]
    assert action.tolist() == [int(candidates[values.argmax()])]
    assert agent.policy.not_exportable is not None


def test_learning_reads_the_taken_actions_embeddings() -> None:
    agent = WolpertingerAgent(_params(), OBSERVATIONS, spaces.Discrete(11), 1, seed=0)
    agent.phase = RunPhase.TRAIN
    rng = np.random.default_rng(0)
    batch = Batch(
        states={"observation": rng.uniform(-1, 1, (8, 3)).astype(np.float32)},
        actions=rng.integers(0, 11, 8),
        rewards=rng.standard_normal(8).astype(np.float32),
        next_states={"observation": rng.uniform(-1, 1, (8, 3)).astype(np.float32)},
        terminated=np.zeros(8, dtype=bool),
        truncated=np.zeros(8, dtype=bool),
    )
    b = batch.map(torch.as_tensor)
    critic = agent.networks["critic"]
    with torch.no_grad():
        q = critic({**b.states, "action": agent.neighbours.embeddings[b.actions]})["q"]
        target = b.rewards + 0.99 * agent.learner.bootstrap_values(b.next_states)
    losses = agent.learner.learn(batch)
    assert float(losses["critic_loss"]) == pytest.approx(float((q - target).square().mean()))


def test_a_continuous_action_space_is_refused() -> None:
    with pytest.raises(CoachError, match=r"discrete actions.*BoxDiscretization"):
        WolpertingerAgent(_params(), OBSERVATIONS, spaces.Box(-1, 1, (2,)), 1, seed=0)


def test_same_seed_same_numbers(tmp_path: Path) -> None:
    def run(seed: int, name: str) -> tuple[int, torch.Tensor]:
        params = _params()
        params.output_filter = OutputFilter(action_filters=[BoxDiscretization(101)])
        params.algorithm.k = 3

        def read(agent: WolpertingerAgent) -> tuple[int, torch.Tensor]:
            online = agent.networks["critic"].online
            weights = torch.cat([p.detach().flatten() for p in online.parameters()])
            return agent.training_steps, weights

        environment = GymEnvironmentParameters(level="Pendulum-v1")
        return after_run(params, environment, short_schedule(), seed, tmp_path / name, read)

    first, again, other = run(0, "a"), run(0, "b"), run(1, "c")
    assert first[0] == again[0] > 0
    assert torch.equal(first[1], again[1]) and not torch.equal(first[1], other[1])
