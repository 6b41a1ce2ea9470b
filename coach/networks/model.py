"""The torch module built from `NetworkParameters`: embedders -> middleware -> heads.

The model is called with a dictionary of tensors and reads exactly the keys its embedders
declare, so a network over ``{"observation", "desired_goal"}`` ignores anything else in the
observation dictionary.

A model whose middleware starts with a recurrent layer (LSTM or GRU) is called on
sequences instead (`Model.unroll`): time-major inputs ``(T, B, ...)``, each of the ``B``
sequences with its own hidden state, which is zeroed wherever an episode starts. A step of
acting is a sequence of one.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from coach.errors import CoachError
from coach.networks.heads import NoisyLinear, run_layer
from coach.networks.parameters import (
    InputEmbedderParameters,
    NetworkParameters,
)
from coach.networks.recurrence import Recurrence, Stretches

ACTIVATIONS: dict[str, type[nn.Module]] = {
    "relu": nn.ReLU,
    "tanh": nn.Tanh,
    "elu": nn.ELU,
    "gelu": nn.GELU,
    "leaky_relu": nn.LeakyReLU,
    "silu": nn.SiLU,
}


class Layers(nn.Sequential):
    """An `nn.Sequential` that runs its layers with `run_layer`: the same weights, the same
    names in the state dict, the same outputs, without ``nn.Module.__call__`` around every
    layer (a shortcut kept by measure: `run_layer`). Hooks registered on the layers
    themselves do not run; hooks on the `Layers` do, when it is called."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self._modules.values():
            x = run_layer(layer, x)
        return x


def mlp(in_features: int, scheme: list[int], activation: str) -> tuple[nn.Module, int]:
    """Linear layers of the given sizes, each followed by the activation."""
    if activation not in ACTIVATIONS:
        raise CoachError(f"unknown activation {activation!r}; choose from {sorted(ACTIVATIONS)}")
    layers: list[nn.Module] = []
    for size in scheme:
        layers += [nn.Linear(in_features, size), ACTIVATIONS[activation]()]
        in_features = size
    return Layers(*layers), in_features


class Embedder(nn.Module):
    """Embeds one observation: rescaled, through optional convolutions, flattened, then
    through an optional MLP."""

    def __init__(self, space: spaces.Space[Any], params: InputEmbedderParameters) -> None:
        super().__init__()
        if space.shape is None:
            raise CoachError(f"an embedder cannot read the space {space}")
        self.scale = 1.0 / params.input_rescaling
        self.offset = params.input_offset
        self.add_channel = False
        self.conv: nn.Module | None = None
        features = int(np.prod(space.shape))
        if params.conv:
            if len(space.shape) not in (2, 3):
                raise CoachError(
                    f"convolutions need an image of shape (channels, height, width) or "
                    f"(height, width), got the space {space}"
                )
            self.add_channel = len(space.shape) == 2
            shape = (1, *space.shape) if self.add_channel else tuple(space.shape)
            layers: list[nn.Module] = []
            channels = shape[0]
            for out_channels, kernel, stride in params.conv:
                layers += [
                    nn.Conv2d(channels, out_channels, kernel, stride),
                    ACTIVATIONS[params.activation](),
                ]
                channels = out_channels
            # Channels-last convolutions run about 30% faster on CPU (oneDNN's native layout).
            self.conv = Layers(*layers)
            self.conv.to(memory_format=torch.channels_last)  # type: ignore[call-overload]
            with torch.no_grad():
                features = int(np.prod(self.conv(torch.zeros(1, *shape)).shape[1:]))
        self.layers, self.out_features = mlp(features, params.scheme, params.activation)
        self.identity_layers = not params.scheme
        """No layers after the flattening (the observation itself is the embedding)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Each step below only where it changes something: every op is a dispatch, and an
        # update runs this several times (online, target, next states).
        if x.dtype != torch.float32:
            x = x.float()
        if self.scale != 1.0:
            x = x * self.scale
        if self.offset != 0.0:
            x = x - self.offset
        if self.conv is not None:
            x = x.unsqueeze(1) if self.add_channel else x
            x = run_layer(self.conv, x.contiguous(memory_format=torch.channels_last))
        if x.dim() != 2:
            x = x.flatten(1)
        return x if self.identity_layers else run_layer(self.layers, x)


class Model(nn.Module):
    """Embedders keyed by observation name, a middleware (an optional recurrent layer, then
    an MLP) and named heads."""

    def __init__(
        self,
        params: NetworkParameters,
        observation_space: spaces.Dict,
        action_space: spaces.Space[Any],
    ) -> None:
        super().__init__()
        missing = set(params.input_embedders) - set(observation_space.spaces)
        if missing:
            raise CoachError(
                f"the network reads {sorted(missing)}, but the observation has keys "
                f"{sorted(observation_space.spaces)}"
            )
        self.input_keys = list(params.input_embedders)
        self.embedders = nn.ModuleDict(
            {key: Embedder(observation_space[key], p) for key, p in params.input_embedders.items()}
        )
        width = sum(e.out_features for e in self.embedders.values())  # type: ignore[misc]
        self.recurrence: Recurrence | None = None
        if params.middleware.recurrent is not None:
            self.recurrence = Recurrence(width, params.middleware.recurrent)
            width = self.recurrence.out_features
        self.middleware, width = mlp(width, params.middleware.scheme, params.middleware.activation)
        self.head_names = [h.name for h in params.heads]
        self.heads = nn.ModuleList(h.build(width, action_space) for h in params.heads)
        self.prior: FrozenPrior | None = None
        if params.prior_scale > 0:
            plain = dataclasses.replace(params, prior_scale=0.0)
            twin = Model(plain, observation_space, action_space)
            self.prior = FrozenPrior(twin, params.prior_scale)

    def reset_noise(self, generator: torch.Generator | None) -> bool:
        """Draw new noise in every noisy layer; whether there was any."""
        noisy = [m for m in self.modules() if isinstance(m, NoisyLinear)]
        for layer in noisy:
            layer.reset_noise(generator)
        return bool(noisy)

    @property
    def recurrent(self) -> bool:
        """Whether the model carries a hidden state (and is called with `unroll`)."""
        return self.recurrence is not None

    def initial_state(self, batch: int) -> torch.Tensor:
        """Zero hidden states for ``batch`` sequences, (batch, parts, layers, size)."""
        assert self.recurrence is not None, "a feed-forward model has no hidden state"
        device = next(self.parameters()).device
        return torch.zeros(batch, *self.recurrence.state_shape, device=device)

    def _embed(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        # Submodules run as in `Layers` (`run_layer`).
        embedded = [run_layer(self.embedders[key], inputs[key]) for key in self.input_keys]
        return embedded[0] if len(embedded) == 1 else torch.cat(embedded, dim=1)

    def _heads(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        x = run_layer(self.middleware, x)
        return {
            name: run_layer(head, x) for name, head in zip(self.head_names, self.heads, strict=True)
        }

    def forward(self, inputs: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        if self.recurrence is not None:
            raise CoachError(
                "a recurrent network is called on sequences with a hidden state (Model.unroll)"
            )
        outputs = self._heads(self._embed(inputs))
        return outputs if self.prior is None else self.prior.add(inputs, outputs)

    def sequence_outputs(
        self, inputs: dict[str, torch.Tensor], hidden: torch.Tensor, layout: Stretches
    ) -> dict[str, torch.Tensor]:
        """The heads' outputs over sequences, as `unroll` gives them, without the state after
        them: what learning from stored sequences needs, in one call of the recurrent layer
        (the sequences' episode starts laid out by `Stretches.of`)."""
        recurrence = self.recurrence
        assert recurrence is not None, "a feed-forward model is called directly"
        return self._over_sequences(inputs, lambda x: recurrence.outputs(x, hidden, layout))

    def step(
        self, inputs: dict[str, torch.Tensor], hidden: torch.Tensor
    ) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
        """One step of a recurrent model for a batch (B, ...) from ``hidden``: the heads'
        outputs (B, ...) and the state after the step (acting)."""
        assert self.recurrence is not None, "a feed-forward model is called directly"
        out, after = self.recurrence.step(self._embed(inputs), hidden)
        return self._heads(out), after

    def unroll(
        self,
        inputs: dict[str, torch.Tensor],
        hidden: torch.Tensor,
        starts: torch.Tensor | None = None,
        before_starts: dict[int, torch.Tensor] | None = None,
    ) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
        """A recurrent model over sequences.

        Args:
            inputs: Time-major inputs, (T, B, ...) each.
            hidden: The hidden state before the first step, (B, parts, layers, size).
            starts: (T, B) bool, the steps that begin an episode (the state is zeroed before
                them); ``None``: none does.
            before_starts: Receives, by step ``t > 0`` where some copy starts an episode,
                every copy's state after step ``t - 1`` (before the zeroing), if given.

        Returns:
            The heads' outputs, (T, B, ...) each, and the hidden state after the last step.
        """
        recurrence = self.recurrence
        assert recurrence is not None, "a feed-forward model is called directly"
        after: list[torch.Tensor] = []

        def run(x: torch.Tensor) -> torch.Tensor:
            out, state = recurrence(x, hidden, starts, before_starts)
            after.append(state)
            result: torch.Tensor = out
            return result

        return self._over_sequences(inputs, run), after[0]

    def _over_sequences(
        self, inputs: dict[str, torch.Tensor], recur: Callable[[torch.Tensor], torch.Tensor]
    ) -> dict[str, torch.Tensor]:
        """The heads' outputs (T, B, ...) over time-major inputs (T, B, ...): the embedders
        and the heads row by row, ``recur`` between them over the sequences (T, B, F)."""
        steps, batch = next(iter(inputs[k] for k in self.input_keys)).shape[:2]
        flat = {k: inputs[k].flatten(0, 1) for k in self.input_keys}
        x = recur(self._embed(flat).unflatten(0, (steps, batch)))
        outputs = self._heads(x.flatten(0, 1))
        return {k: v.unflatten(0, (steps, batch)) for k, v in outputs.items()}


class FrozenLinear(nn.Linear):
    """A linear layer whose weight and bias are buffers, not parameters (run through its
    own ``forward``: `run_layer`'s shortcut reads an ``nn.Linear``'s parameters)."""

    def __init__(self, layer: nn.Linear) -> None:
        nn.Module.__init__(self)
        self.in_features, self.out_features = layer.in_features, layer.out_features
        self.register_buffer("weight", layer.weight.detach())
        self.register_buffer("bias", None if layer.bias is None else layer.bias.detach())


class FrozenPrior(nn.Module):
    """A randomized prior function (`NetworkParameters.prior_scale`): a twin of the model,
    its weights turned into buffers so that nothing trains them, added at ``scale``."""

    def __init__(self, twin: Model, scale: float) -> None:
        super().__init__()
        for module in list(twin.modules()):
            for name, child in module.named_children():
                if type(child) is nn.Linear:
                    setattr(module, name, FrozenLinear(child))
            for name, weight in list(module._parameters.items()):
                del module._parameters[name]
                module.register_buffer(name, None if weight is None else weight.detach())
        self.twin = twin
        self.scale = scale

    def add(
        self, inputs: dict[str, torch.Tensor], outputs: dict[str, torch.Tensor]
    ) -> dict[str, torch.Tensor]:
        """``outputs`` plus ``scale`` times the twin's outputs on ``inputs``."""
        prior = self.twin.forward(inputs)
        return {name: value + self.scale * prior[name] for name, value in outputs.items()}


def initialize(module: nn.Module, generator: torch.Generator) -> None:
    """Seeded initialization with torch's defaults for Linear and Conv2d: He-uniform weights,
    biases uniform in +-1/sqrt(fan in).

    Drawn from ``generator`` instead of torch's global generator, so that a network's
    initial weights depend on the run's seed alone.
    """
    for layer in module.modules():
        if isinstance(layer, NoisyLinear):
            bound = 1.0 / math.sqrt(layer.in_features)
            nn.init.uniform_(layer.weight_mu, -bound, bound, generator=generator)
            nn.init.uniform_(layer.bias_mu, -bound, bound, generator=generator)
            layer.reset_noise(generator)
        elif isinstance(layer, nn.LSTM | nn.GRU):
            # torch's default for recurrent layers: every weight and bias uniform in
            # +-1/sqrt(hidden size).
            bound = 1.0 / math.sqrt(layer.hidden_size)
            for tensor in layer.parameters():
                nn.init.uniform_(tensor, -bound, bound, generator=generator)
        elif isinstance(layer, nn.Linear | nn.Conv2d):
            nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)
            fan_in = layer.weight[0].numel()  # inputs (times kernel area) per output unit
            bound = 1.0 / math.sqrt(fan_in)
            if layer.bias is not None:
                nn.init.uniform_(layer.bias, -bound, bound, generator=generator)
