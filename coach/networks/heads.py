"""Output heads: what a network answers for each action.

Every head is described by a parameters dataclass whose ``build`` makes the torch module;
the network calls it on the middleware's features. Value heads for discrete actions:

- `QHeadParameters`: one value per action (Mnih et al., 2015).
- ``dueling=True`` on any of them: a state value and centred advantages (Wang et al., 2016).
- `CategoricalQHeadParameters`: a distribution over ``num_atoms`` fixed returns per action,
  C51 (Bellemare et al., 2017).
- `QuantileQHeadParameters`: ``num_quantiles`` quantiles of the return per action, QR-DQN
  (Dabney et al., 2018).
- `BootstrappedQHeadParameters`: ``num_heads`` independent Q heads (Osband et al., 2016).
- `KeyHeadParameters`: a state's key into NEC's dictionaries (Pritzel et al., 2017), whose
  values the agent looks up (`coach.memories.dnd`).

``noisy=True`` makes a head's layers `NoisyLinear` (Fortunato et al., 2018).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from coach import validation as check
from coach.errors import CoachError


class NoisyLinear(nn.Module):
    """A linear layer with learned, factorized Gaussian noise on its weights and biases.

    The noise is drawn by `reset_noise` (from a given generator, so runs stay seeded); in
    ``eval()`` mode the layer uses its mean weights.
    """

    def __init__(self, in_features: int, out_features: int, sigma0: float = 0.5) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1.0 / math.sqrt(in_features)
        self.weight_mu = nn.Parameter(
            torch.empty(out_features, in_features).uniform_(-bound, bound)
        )
        self.bias_mu = nn.Parameter(torch.empty(out_features).uniform_(-bound, bound))
        self.weight_sigma = nn.Parameter(torch.full((out_features, in_features), sigma0 * bound))
        self.bias_sigma = nn.Parameter(torch.full((out_features,), sigma0 * bound))
        self.weight_epsilon: torch.Tensor
        self.bias_epsilon: torch.Tensor
        self.register_buffer("weight_epsilon", torch.zeros(out_features, in_features))
        self.register_buffer("bias_epsilon", torch.zeros(out_features))

    @staticmethod
    def _scaled(size: int, generator: torch.Generator | None) -> torch.Tensor:
        device = generator.device if generator is not None else None
        x = torch.randn(size, generator=generator, device=device)
        return x.sign() * x.abs().sqrt()

    def reset_noise(self, generator: torch.Generator | None = None) -> None:
        e_in = self._scaled(self.in_features, generator)
        e_out = self._scaled(self.out_features, generator)
        self.weight_epsilon.copy_(torch.outer(e_out, e_in))
        self.bias_epsilon.copy_(e_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training:
            return nn.functional.linear(x, self.weight_mu, self.bias_mu)
        weight = self.weight_mu + self.weight_sigma * self.weight_epsilon
        bias = self.bias_mu + self.bias_sigma * self.bias_epsilon
        return nn.functional.linear(x, weight, bias)


def run_layer(layer: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """What ``layer(x)`` computes, without ``nn.Module.__call__``: for a linear layer, a
    ReLU or a tanh, the op its ``forward`` runs, called directly on its weights; for any
    other layer, its ``forward``. The same ops on the same tensors, so the same numbers;
    hooks registered on ``layer`` do not run (those on the model it is part of do).

    A shortcut kept by measure: ``nn.Module.__call__`` around each layer (its hook checks,
    and for a linear layer two ``__getattr__`` lookups) costs about a microsecond a layer,
    and a network runs several layers many times a step. Run through it instead (the
    ``stock layers`` column of ``python -m benchmarks.whole_runs``), a whole run of
    Pendulum_TD3 took 8.4% more CPU and one of CartPole_ClippedPPO 10.8% more (CartPole_DQN
    3.9%; best of 2 whole runs each, on a quiet 2-core machine). What it relies on,
    that ``nn.Linear`` keeps its weights in ``_parameters`` and that the three layers'
    ``forward`` is the op called here, is checked against the torch installed by
    ``tests/unit/networks/test_run_layer.py``, which fails where torch changed it.
    """
    kind = type(layer)
    if kind is nn.Linear:
        weights = layer._parameters
        return _linear(x, weights["weight"], weights["bias"])  # type: ignore[arg-type]
    if kind is nn.ReLU and not layer.inplace:
        return torch.relu(x)
    if kind is nn.Tanh:
        return torch.tanh(x)
    return layer.forward(x)  # type: ignore[no-any-return]


_linear = nn.functional.linear
"""torch's linear op (`nn.functional.linear` is the builtin itself, no Python wrapper)."""


def linear(in_features: int, out_features: int, noisy: bool) -> nn.Module:
    return NoisyLinear(in_features, out_features) if noisy else nn.Linear(in_features, out_features)


def _num_actions(action_space: spaces.Space[Any], head: str) -> int:
    if not isinstance(action_space, spaces.Discrete):
        raise CoachError(f"a {head} head needs a Discrete action space, got {action_space}")
    return int(action_space.n)


class ValueHead(nn.Module):
    """``outputs`` numbers per action, optionally split into value and centred advantages.

    Returns shape (B, A) for ``outputs == 1``, else (B, A, outputs).
    """

    def __init__(self, in_features: int, actions: int, outputs: int, dueling: bool, noisy: bool):
        super().__init__()
        self.actions, self.outputs, self.dueling = actions, outputs, dueling
        self.advantage = linear(in_features, actions * outputs, noisy)
        self.value = linear(in_features, outputs, noisy) if dueling else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = run_layer(self.advantage, x).view(-1, self.actions, self.outputs)
        if self.value is not None:
            value = run_layer(self.value, x).view(-1, 1, self.outputs)
            out = value + out - out.mean(dim=1, keepdim=True)
        return out.squeeze(-1) if self.outputs == 1 else out


@dataclass(slots=True, kw_only=True)
class HeadParameters:
    """An output head on top of the middleware."""

    name: str = "head"
    """The name the head's output is returned under."""

    def validate(self) -> None:
        check.name("name", self.name)

    def build(self, in_features: int, action_space: spaces.Space[Any]) -> nn.Module:
        raise CoachError(f"no head for {type(self).__name__}")


@dataclass(slots=True, kw_only=True)
class QHeadParameters(HeadParameters):
    """One state-action value per discrete action: output (B, A)."""

    name: str = "q"
    """The name the head's output is returned under."""
    dueling: bool = False
    """Split into a state value and advantages centred on their mean."""
    noisy: bool = False
    """Noisy linear layers (parameter-space exploration)."""

    def build(self, in_features: int, action_space: spaces.Space[Any]) -> nn.Module:
        actions = _num_actions(action_space, "Q")
        if not (self.dueling or self.noisy):
            return nn.Linear(in_features, actions)
        return ValueHead(in_features, actions, 1, self.dueling, self.noisy)


@dataclass(slots=True, kw_only=True)
class CategoricalQHeadParameters(QHeadParameters):
    """Logits of a return distribution on fixed atoms per action: output (B, A, atoms)."""

    num_atoms: int = 51
    """Number of atoms, evenly spaced from ``v_min`` to ``v_max``."""
    v_min: float = -10.0
    """The smallest representable return."""
    v_max: float = 10.0
    """The largest representable return."""

    def validate(self) -> None:
        HeadParameters.validate(self)
        check.whole("num_atoms", self.num_atoms, 2)
        check.number("v_min", self.v_min)
        check.number("v_max", self.v_max, self.v_min, low_open=True)

    def build(self, in_features: int, action_space: spaces.Space[Any]) -> nn.Module:
        if self.num_atoms < 2 or self.v_max <= self.v_min:
            raise CoachError("a categorical head needs num_atoms >= 2 and v_max > v_min")
        actions = _num_actions(action_space, "categorical Q")
        return ValueHead(in_features, actions, self.num_atoms, self.dueling, self.noisy)


@dataclass(slots=True, kw_only=True)
class QuantileQHeadParameters(QHeadParameters):
    """Quantiles of the return per action: output (B, A, quantiles)."""

    num_quantiles: int = 200
    """Number of quantiles, at the midpoints (2i + 1) / 2N."""

    def validate(self) -> None:
        HeadParameters.validate(self)
        check.whole("num_quantiles", self.num_quantiles, 1)

    def build(self, in_features: int, action_space: spaces.Space[Any]) -> nn.Module:
        actions = _num_actions(action_space, "quantile Q")
        return ValueHead(in_features, actions, self.num_quantiles, self.dueling, self.noisy)


class BootstrappedHeads(nn.Module):
    """``num_heads`` Q heads on shared features: output (B, heads, A)."""

    def __init__(self, in_features: int, actions: int, num_heads: int, dueling: bool, noisy: bool):
        super().__init__()
        self.heads = nn.ModuleList(
            ValueHead(in_features, actions, 1, dueling, noisy) for _ in range(num_heads)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.stack([run_layer(head, x) for head in self.heads], dim=1)


@dataclass(slots=True, kw_only=True)
class BootstrappedQHeadParameters(QHeadParameters):
    """Several Q heads trained on different bootstrap masks: output (B, heads, A)."""

    num_heads: int = 10
    """Number of Q heads."""

    def validate(self) -> None:
        HeadParameters.validate(self)
        check.whole("num_heads", self.num_heads, 1)

    def build(self, in_features: int, action_space: spaces.Space[Any]) -> nn.Module:
        actions = _num_actions(action_space, "bootstrapped Q")
        return BootstrappedHeads(in_features, actions, self.num_heads, self.dueling, self.noisy)


class ScalarHead(nn.Module):
    """One number per row: output (B,)."""

    def __init__(self, in_features: int) -> None:
        super().__init__()
        self.linear = nn.Linear(in_features, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = run_layer(self.linear, x)
        return out.squeeze(-1)


@dataclass(slots=True, kw_only=True)
class VHeadParameters(HeadParameters):
    """A state value: output (B,)."""

    name: str = "v"
    """The name the head's output is returned under."""

    def build(self, in_features: int, action_space: spaces.Space[Any]) -> nn.Module:
        return ScalarHead(in_features)


@dataclass(slots=True, kw_only=True)
class CategoricalPolicyHeadParameters(HeadParameters):
    """Logits of a categorical policy over discrete actions: output (B, A)."""

    name: str = "policy"
    """The name the head's output is returned under."""

    def build(self, in_features: int, action_space: spaces.Space[Any]) -> nn.Module:
        return nn.Linear(in_features, _num_actions(action_space, "categorical policy"))


class GaussianHead(nn.Module):
    """Means and log standard deviations: output (B, 2, D)."""

    def __init__(self, in_features: int, dims: int, state_dependent: bool, log_std: float):
        super().__init__()
        self.dims = dims
        self.mean = nn.Linear(in_features, dims)
        self.state_log_std = nn.Linear(in_features, dims) if state_dependent else None
        self.log_std = None if state_dependent else nn.Parameter(torch.full((dims,), log_std))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mean = run_layer(self.mean, x)
        if self.state_log_std is not None:
            log_std = run_layer(self.state_log_std, x).clamp(-20.0, 2.0)
        else:
            assert self.log_std is not None
            log_std = self.log_std.expand_as(mean)
        return torch.stack([mean, log_std], dim=1)


@dataclass(slots=True, kw_only=True)
class GaussianPolicyHeadParameters(HeadParameters):
    """A diagonal Gaussian policy over a Box action space: output (B, 2, D), means then
    log standard deviations."""

    name: str = "policy"
    """The name the head's output is returned under."""
    state_dependent_std: bool = False
    """Log std computed from the state (else one learned vector)."""
    initial_log_std: float = 0.0
    """The starting log std of the state-independent vector."""

    def validate(self) -> None:
        HeadParameters.validate(self)
        check.number("initial_log_std", self.initial_log_std)

    def build(self, in_features: int, action_space: spaces.Space[Any]) -> nn.Module:
        if not isinstance(action_space, spaces.Box) or len(action_space.shape) != 1:
            raise CoachError(
                f"a Gaussian policy head needs a 1-d Box action space, got {action_space}"
            )
        return GaussianHead(
            in_features, action_space.shape[0], self.state_dependent_std, self.initial_log_std
        )


class DeterministicPolicyHead(nn.Module):
    """One action per row, tanh-squashed into the box ``[low, high]``: output (B, D)."""

    def __init__(self, in_features: int, space: spaces.Box) -> None:
        super().__init__()
        self.linear = nn.Linear(in_features, space.shape[0])
        low = torch.as_tensor(space.low, dtype=torch.float32)
        high = torch.as_tensor(space.high, dtype=torch.float32)
        self.centre: torch.Tensor
        self.scale: torch.Tensor
        self.register_buffer("centre", (high + low) / 2)
        self.register_buffer("scale", (high - low) / 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.centre + self.scale * torch.tanh(run_layer(self.linear, x))


@dataclass(slots=True, kw_only=True)
class DeterministicPolicyHeadParameters(HeadParameters):
    """A deterministic policy over a bounded 1-d Box (DDPG, TD3): output (B, D) inside the
    bounds (presets map the agent's box to [-1, 1] with an output filter, so that the
    network works in one scale whatever the environment's)."""

    name: str = "policy"
    """The name the head's output is returned under."""

    def build(self, in_features: int, action_space: spaces.Space[Any]) -> nn.Module:
        if (
            not isinstance(action_space, spaces.Box)
            or len(action_space.shape) != 1
            or not np.all(np.isfinite(action_space.low) & np.isfinite(action_space.high))
        ):
            raise CoachError(
                f"a deterministic policy head needs a bounded 1-d Box action space, got "
                f"{action_space}"
            )
        return DeterministicPolicyHead(in_features, action_space)


@dataclass(slots=True, kw_only=True)
class KeyHeadParameters(HeadParameters):
    """A state's key (embedding): a linear map of the middleware's features to ``size``
    numbers, or those features themselves (``size=None``); output (B, size)."""

    name: str = "key"
    """The name the head's output is returned under."""
    size: int | None = 64
    """The key's length; ``None``: the middleware's width, its features as they are."""

    def validate(self) -> None:
        HeadParameters.validate(self)
        if self.size is not None:
            check.whole("size", self.size, 1)

    def build(self, in_features: int, action_space: spaces.Space[Any]) -> nn.Module:
        return nn.Identity() if self.size is None else nn.Linear(in_features, self.size)
