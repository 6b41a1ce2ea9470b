"""Action distributions of policy heads, for the policy-optimization family.

- `CategoricalDistribution`: discrete actions from logits.
- `GaussianDistribution`: a diagonal Gaussian over continuous actions, either squashed into the
  action bounds with tanh (its log-probability corrected for the change of variables, as in
  Haarnoja et al., 2018) or clipped into them (the log-probability is the unclipped sample's,
  as PPO implementations do).

Sampling takes a torch generator, so acting stays seeded.
"""

from __future__ import annotations

import math

import torch

LOG_2PI = math.log(2 * math.pi)


class CategoricalDistribution:
    """A categorical distribution per row from logits (B, A)."""

    def __init__(self, logits: torch.Tensor) -> None:
        self.log_probs = torch.log_softmax(logits, dim=-1)

    def sample(self, generator: torch.Generator | None = None) -> torch.Tensor:
        return torch.multinomial(self.log_probs.exp(), 1, generator=generator).squeeze(-1)

    def mode(self) -> torch.Tensor:
        return self.log_probs.argmax(dim=-1)

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        return self.log_probs.gather(-1, actions.long()[..., None]).squeeze(-1)

    def entropy(self) -> torch.Tensor:
        return -(self.log_probs.exp() * self.log_probs).sum(-1)


class GaussianDistribution:
    """A diagonal Gaussian per row, mapped into ``[low, high]`` by tanh or by clipping.

    Args:
        mean: (B, D) means of the pre-squash Gaussian.
        log_std: (B, D) or (D,) log standard deviations.
        low: (D,) lower action bounds.
        high: (D,) upper action bounds.
        squash: tanh-squash into the bounds (else clip into them).
    """

    def __init__(
        self,
        mean: torch.Tensor,
        log_std: torch.Tensor,
        low: torch.Tensor,
        high: torch.Tensor,
        squash: bool = True,
    ) -> None:
        self.mean = mean
        self.log_std = log_std.expand_as(mean)
        self.std = self.log_std.exp()
        self.low, self.high = low, high
        self.scale = (high - low) / 2
        self.centre = (high + low) / 2
        self.squash = squash

    def _to_actions(self, u: torch.Tensor) -> torch.Tensor:
        if self.squash:
            return self.centre + self.scale * torch.tanh(u)
        return torch.maximum(torch.minimum(u, self.high), self.low)

    def sample(self, generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """``(actions, pre-squash samples)``; keep the latter for `log_prob`."""
        noise = torch.randn(self.mean.shape, generator=generator, device=self.mean.device)
        u = self.mean + self.std * noise
        return self._to_actions(u), u

    def mode(self) -> torch.Tensor:
        return self._to_actions(self.mean)

    def log_prob(self, u: torch.Tensor) -> torch.Tensor:
        """Log-density of the actions made from the pre-squash samples ``u`` (B, D) -> (B,)."""
        gaussian = -0.5 * (((u - self.mean) / self.std) ** 2 + 2 * self.log_std + LOG_2PI)
        log_prob = gaussian.sum(-1)
        if self.squash:
            # d a / d u = scale * (1 - tanh(u)^2); log(1 - tanh^2) = 2 (log 2 - u - softplus(-2u)),
            # which stays finite where tanh saturates.
            log_det = 2 * (math.log(2) - u - torch.nn.functional.softplus(-2 * u))
            log_prob = log_prob - (log_det + torch.log(self.scale)).sum(-1)
        return log_prob

    def entropy(self) -> torch.Tensor:
        """The pre-squash Gaussian's entropy (B,): the squashed one has no closed form."""
        return (0.5 + 0.5 * LOG_2PI + self.log_std).sum(-1)
