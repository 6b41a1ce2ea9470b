"""Policy distributions against torch.distributions; dist heads' output shapes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces
from torch.distributions import (
    Categorical,
    Independent,
    Normal,
    TanhTransform,
    TransformedDistribution,
)
from torch.distributions.transforms import AffineTransform

from coach.errors import CoachError
from coach.networks.distributions import CategoricalDistribution, GaussianDistribution
from coach.networks.heads import (
    CategoricalPolicyHeadParameters,
    GaussianPolicyHeadParameters,
    VHeadParameters,
)

GEN = torch.Generator().manual_seed(0)


def test_categorical_matches_torch() -> None:
    logits = torch.randn(5, 4, generator=GEN)
    actions = torch.tensor([0, 3, 1, 2, 3])
    ours, reference = CategoricalDistribution(logits), Categorical(logits=logits)
    torch.testing.assert_close(ours.log_prob(actions), reference.log_prob(actions))
    torch.testing.assert_close(ours.entropy(), reference.entropy())
    torch.testing.assert_close(ours.mode(), logits.argmax(-1))
    samples = torch.stack([ours.sample(torch.Generator().manual_seed(s)) for s in range(4000)])
    frequencies = torch.stack([(samples[:, 0] == a).float().mean() for a in range(4)])
    torch.testing.assert_close(frequencies, reference.probs[0], atol=0.03, rtol=0)


@pytest.mark.parametrize("state_dependent", [False, True])
def test_clipped_gaussian_matches_torch_normal(state_dependent: bool) -> None:
    mean = torch.randn(6, 3, generator=GEN)
    log_std = torch.randn(6, 3, generator=GEN) * 0.3 if state_dependent else torch.zeros(3) - 0.5
    low, high = -torch.ones(3), torch.ones(3)
    ours = GaussianDistribution(mean, log_std, low, high, squash=False)
    reference = Independent(Normal(mean, log_std.exp().expand_as(mean)), 1)
    actions, u = ours.sample(torch.Generator().manual_seed(1))
    torch.testing.assert_close(ours.log_prob(u), reference.log_prob(u))
    torch.testing.assert_close(ours.entropy(), reference.entropy())
    assert (actions <= high).all() and (actions >= low).all()
    torch.testing.assert_close(actions, u.clamp(-1, 1))


def test_squashed_gaussian_matches_a_tanh_transformed_normal() -> None:
    mean = torch.randn(8, 2, generator=GEN) * 2
    log_std = torch.randn(8, 2, generator=GEN) * 0.2
    low, high = torch.tensor([-2.0, 0.0]), torch.tensor([2.0, 1.0])
    ours = GaussianDistribution(mean, log_std, low, high, squash=True)
    scale, centre = (high - low) / 2, (high + low) / 2
    reference = TransformedDistribution(
        Independent(Normal(mean, log_std.exp()), 1),
        [TanhTransform(), AffineTransform(centre, scale, event_dim=1)],
    )
    actions, u = ours.sample(torch.Generator().manual_seed(2))
    torch.testing.assert_close(ours.log_prob(u), reference.log_prob(actions), rtol=1e-4, atol=1e-4)
    assert (actions >= low).all() and (actions <= high).all()
    torch.testing.assert_close(ours.mode(), centre + scale * torch.tanh(mean))


def test_squashed_log_prob_stays_finite_where_tanh_saturates() -> None:
    dist = GaussianDistribution(torch.zeros(1, 1), torch.zeros(1, 1), -torch.ones(1), torch.ones(1))
    assert torch.isfinite(dist.log_prob(torch.tensor([[30.0]]))).all()


def test_policy_and_value_heads() -> None:
    x = torch.randn(5, 16, generator=GEN)
    assert CategoricalPolicyHeadParameters().build(16, spaces.Discrete(3))(x).shape == (5, 3)
    assert VHeadParameters().build(16, spaces.Discrete(3))(x).shape == (5,)
    box = spaces.Box(-1, 1, (2,), np.float32)
    fixed = GaussianPolicyHeadParameters(initial_log_std=-1.0).build(16, box)(x)
    assert fixed.shape == (5, 2, 2) and torch.all(fixed[:, 1] == -1.0)
    varying = GaussianPolicyHeadParameters(state_dependent_std=True).build(16, box)(x)
    assert varying[:, 1].std() > 0
    with pytest.raises(CoachError, match="Box"):
        GaussianPolicyHeadParameters().build(16, spaces.Discrete(3))
