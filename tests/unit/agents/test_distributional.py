"""C51's projection and QR-DQN's quantile Huber loss against hand-computed cases, and their
bootstraps from the best legal next action under an action mask."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch
from gymnasium import spaces

from coach.agents.categorical_dqn import CategoricalDQNAgentParameters, project_distribution
from coach.agents.dqn import DQNAgentParameters
from coach.agents.q_learning import QAgent
from coach.agents.qr_dqn import QRDQNAgentParameters, quantile_huber_loss
from coach.core.action_masks import ACTION_MASK
from coach.core.types import Batch


def test_projection_splits_mass_between_neighbouring_atoms() -> None:
    support = torch.tensor([0.0, 1.0, 2.0])
    probabilities = torch.tensor([[0.2, 0.5, 0.3], [0.2, 0.5, 0.3]])
    rewards = torch.tensor([0.5, 3.0])
    discounts = torch.tensor([0.5, 0.0])  # the second row is terminal: no bootstrap
    projected = project_distribution(probabilities, rewards, discounts, support)
    # Row 1: atoms land on 0.5, 1.0 and 1.5: 0.2 splits 0.1/0.1 over atoms 0 and 1, 0.5 stays
    # whole on atom 1 (it lands exactly there), 0.3 splits 0.15/0.15 over atoms 1 and 2.
    # Row 2: everything lands on 3, clipped to the last atom.
    expected = torch.tensor([[0.1, 0.75, 0.15], [0.0, 0.0, 1.0]])
    torch.testing.assert_close(projected, expected)
    torch.testing.assert_close(projected.sum(1), torch.ones(2))


def test_projection_of_the_lowest_atom() -> None:
    support = torch.tensor([-1.0, 0.0, 1.0])
    projected = project_distribution(
        torch.tensor([[1.0, 0.0, 0.0]]), torch.tensor([-5.0]), torch.tensor([0.9]), support
    )
    torch.testing.assert_close(projected, torch.tensor([[1.0, 0.0, 0.0]]))


def test_quantile_huber_loss_in_the_quadratic_region() -> None:
    quantiles = torch.tensor([[0.0, 2.0]])
    taus = torch.tensor([0.25, 0.75])
    # u = 1 - theta = (1, -1): Huber 0.5 each; weights |0.25 - 0| and |0.75 - 1| = 0.25.
    loss = quantile_huber_loss(quantiles, torch.tensor([[1.0]]), taus, kappa=1.0)
    torch.testing.assert_close(loss, torch.tensor([0.25]))


def test_quantile_huber_loss_in_the_linear_region() -> None:
    # u = (3, -1): Huber 2.5 (linear) and 0.5; weights 0.5 each; mean over the 2 targets.
    loss = quantile_huber_loss(
        torch.tensor([[0.0]]), torch.tensor([[3.0, -1.0]]), torch.tensor([0.5]), kappa=1.0
    )
    torch.testing.assert_close(loss, torch.tensor([0.75]))


def test_quantile_huber_gradient_moves_quantiles_towards_their_level() -> None:
    quantiles = torch.zeros(1, 2, requires_grad=True)
    targets = torch.linspace(-1, 1, 101)[None]
    quantile_huber_loss(quantiles, targets, torch.tensor([0.1, 0.9]), kappa=0.01).backward()
    assert quantiles.grad is not None
    # The 10% quantile sits above most targets' lower tail: it must go down; the 90% up.
    assert quantiles.grad[0, 0] > 0 and quantiles.grad[0, 1] < 0


def _quantile_huber_written_out(
    quantiles: torch.Tensor, targets: torch.Tensor, taus: torch.Tensor, kappa: float
) -> torch.Tensor:
    """The loss as the paper writes it, one elementwise step at a time."""
    u = targets[:, None, :] - quantiles[:, :, None]
    huber = torch.where(u.abs() <= kappa, 0.5 * u.pow(2), kappa * (u.abs() - 0.5 * kappa))
    weight = (taus[None, :, None] - (u.detach() < 0).float()).abs()
    return (weight * huber / kappa).mean(dim=2).sum(dim=1)


@pytest.mark.parametrize("kappa", [1.0, 0.3, 2.0])
def test_quantile_huber_loss_and_gradient_are_the_written_out_ones_to_the_bit(
    kappa: float,
) -> None:
    generator = torch.Generator().manual_seed(0)
    quantiles = torch.randn(16, 8, generator=generator) * 2
    targets = torch.randn(16, 9, generator=generator) * 2
    targets[0, :8] = quantiles[0]  # u = 0
    targets[1, :8] = quantiles[1] + kappa  # |u| at kappa, or a rounding away from it
    taus = (2 * torch.arange(8) + 1) / 16
    results = []
    for loss_of in (quantile_huber_loss, _quantile_huber_written_out):
        theta = quantiles.clone().requires_grad_(True)
        loss = loss_of(theta, targets, taus, kappa)
        loss.mean().backward()
        results.append((loss.detach(), theta.grad))
    (loss, grad), (expected_loss, expected_grad) = results
    assert torch.equal(loss, expected_loss) and torch.equal(grad, expected_grad)


# -- action masks: the greedy next action is a legal one ---------------------------------------

OBSERVATIONS = spaces.Dict(
    {
        "observation": spaces.Box(-1.0, 1.0, (4,), np.float32),
        ACTION_MASK: spaces.Box(0, 1, (3,), np.int8),
    }
)
ROWS = np.arange(6)
DISCOUNT = 0.9


def masked_agent(params: DQNAgentParameters) -> QAgent:
    params.algorithm.discount = DISCOUNT
    params.network_wrappers["main"].middleware.scheme = [16]
    agent = params.agent_class()(params, OBSERVATIONS, spaces.Discrete(3), 1, seed=0)
    assert isinstance(agent, QAgent) and agent.q_network.target is not None
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():  # a target that ranks the actions otherwise than the online network
        for p in agent.q_network.target.parameters():
            p.add_(0.5 * torch.randn(p.shape, generator=generator))
    return agent


def masked_batch(
    chooser: Callable[[dict[str, torch.Tensor]], torch.Tensor],
) -> tuple[Batch, np.ndarray]:
    """Six rows whose next-state masks rule out the action ``chooser`` (Q-values of the next
    states) ranks first, except: row 3 terminates in a state with no legal action, row 4 has
    none legal but goes on (not constrained), row 5 has every action legal. Returns the batch
    and the next actions the learner should count as legal."""
    rng = np.random.default_rng(4)
    states = rng.uniform(-1, 1, (6, 4)).astype(np.float32)
    next_states = rng.uniform(-1, 1, (6, 4)).astype(np.float32)
    with torch.no_grad():
        ranked = chooser({"observation": torch.as_tensor(next_states)}).numpy()
    masks = np.ones((6, 3), dtype=np.int8)
    masks[ROWS[:3], ranked[:3].argmax(axis=1)] = 0
    masks[3:5] = 0
    legal = masks.astype(bool)
    legal[3:5] = True
    batch = Batch(
        states={"observation": states, ACTION_MASK: np.ones((6, 3), np.int8)},
        actions=rng.integers(0, 3, 6),
        rewards=rng.normal(0.0, 1.0, 6).astype(np.float32),
        next_states={"observation": next_states, ACTION_MASK: masks},
        terminated=np.array([False, False, False, True, False, False]),
        truncated=np.zeros(6, bool),
    )
    return batch, legal


def legal_argmax(values: torch.Tensor, legal: np.ndarray) -> torch.Tensor:
    return torch.as_tensor(np.where(legal, values.numpy(), -np.inf).argmax(axis=1))


@pytest.mark.parametrize("double_q", [False, True], ids=["C51", "double"])
def test_c51_projects_the_distribution_of_the_best_legal_next_action(double_q: bool) -> None:
    params = CategoricalDQNAgentParameters()
    params.algorithm.double_q = double_q
    agent = masked_agent(params)
    online, target = agent.q_network.online, agent.q_network.target
    assert target is not None
    chooser = online if double_q else target
    batch, legal = masked_batch(lambda s: agent.action_values(chooser(s)))
    states = {"observation": torch.as_tensor(batch.states["observation"])}
    next_states = {"observation": torch.as_tensor(batch.next_states["observation"])}
    rewards = torch.as_tensor(batch.rewards)
    discounts = DISCOUNT * (1.0 - torch.as_tensor(batch.terminated).float())
    atoms = agent.support  # type: ignore[attr-defined]

    def cross_entropy(best: torch.Tensor) -> float:
        with torch.no_grad():
            next_p = torch.softmax(target(next_states)["q"][ROWS, best], dim=-1)
            projected = project_distribution(next_p, rewards, discounts, atoms)
            log_p = torch.log_softmax(online(states)["q"][ROWS, batch.actions], dim=-1)
            return float(-(projected * log_p).sum(-1).mean())

    with torch.no_grad():
        ranked = agent.action_values(chooser(next_states))
    expected = cross_entropy(legal_argmax(ranked, legal))
    assert abs(expected - cross_entropy(ranked.argmax(dim=1))) > 1e-4  # the masks matter

    loss = agent.learner.learn(batch)["q_loss"]  # type: ignore[union-attr]

    assert np.isfinite(loss) and loss == pytest.approx(expected, rel=1e-5)


def test_qr_dqn_regresses_on_the_quantiles_of_the_best_legal_next_action() -> None:
    params = QRDQNAgentParameters()
    params.network_wrappers["main"].heads[0].num_quantiles = 8  # type: ignore[attr-defined]
    agent = masked_agent(params)
    online, target = agent.q_network.online, agent.q_network.target
    assert target is not None
    batch, legal = masked_batch(lambda s: target(s)["q"].mean(-1))
    states = {"observation": torch.as_tensor(batch.states["observation"])}
    next_states = {"observation": torch.as_tensor(batch.next_states["observation"])}
    not_terminal = 1.0 - torch.as_tensor(batch.terminated).float()
    taus = (2 * torch.arange(8, dtype=torch.float32) + 1) / 16

    def loss_for(best: torch.Tensor) -> float:
        with torch.no_grad():
            next_q = target(next_states)["q"][ROWS, best]  # (6, 8)
            targets = (
                torch.as_tensor(batch.rewards)[:, None]
                + (DISCOUNT * not_terminal)[:, None] * next_q
            )
            quantiles = online(states)["q"][ROWS, batch.actions]
            return float(quantile_huber_loss(quantiles, targets, taus).mean())

    with torch.no_grad():
        ranked = target(next_states)["q"].mean(-1)
    expected = loss_for(legal_argmax(ranked, legal))
    assert abs(expected - loss_for(ranked.argmax(dim=1))) > 1e-4  # the masks matter

    loss = agent.learner.learn(batch)["q_loss"]  # type: ignore[union-attr]

    assert np.isfinite(loss) and loss == pytest.approx(expected, rel=1e-5)
