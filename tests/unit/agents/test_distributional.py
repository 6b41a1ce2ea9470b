"""C51's projection and QR-DQN's quantile Huber loss against hand-computed cases."""

from __future__ import annotations

import torch

from coach.agents.categorical_dqn import project_distribution
from coach.agents.qr_dqn import quantile_huber_loss


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
