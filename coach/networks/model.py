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

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from coach.errors import CoachError
from coach.networks.heads import NoisyLinear
from coach.networks.parameters import (
    InputEmbedderParameters,
    NetworkParameters,
    RecurrentParameters,
)

ACTIVATIONS: dict[str, type[nn.Module]] = {
    "relu": nn.ReLU,
    "tanh": nn.Tanh,
    "elu": nn.ELU,
    "gelu": nn.GELU,
    "leaky_relu": nn.LeakyReLU,
    "silu": nn.SiLU,
}


def mlp(in_features: int, scheme: list[int], activation: str) -> tuple[nn.Module, int]:
    """Linear layers of the given sizes, each followed by the activation."""
    if activation not in ACTIVATIONS:
        raise CoachError(f"unknown activation {activation!r}; choose from {sorted(ACTIVATIONS)}")
    layers: list[nn.Module] = []
    for size in scheme:
        layers += [nn.Linear(in_features, size), ACTIVATIONS[activation]()]
        in_features = size
    return nn.Sequential(*layers), in_features


class Embedder(nn.Module):
    """Embeds one observation: rescaled, through optional convolutions, flattened, then
    through an optional MLP."""

    def __init__(self, space: spaces.Space[Any], params: InputEmbedderParameters) -> None:
        super().__init__()
        if space.shape is None:
            raise CoachError(f"an embedder cannot read the space {space}")
        self.scale = 1.0 / params.input_rescaling
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
            self.conv = nn.Sequential(*layers)
            self.conv.to(memory_format=torch.channels_last)  # type: ignore[call-overload]
            with torch.no_grad():
                features = int(np.prod(self.conv(torch.zeros(1, *shape)).shape[1:]))
        self.layers, self.out_features = mlp(features, params.scheme, params.activation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.float()
        if self.scale != 1.0:
            x = x * self.scale
        if self.conv is not None:
            x = x.unsqueeze(1) if self.add_channel else x
            x = self.conv(x.contiguous(memory_format=torch.channels_last))
        out: torch.Tensor = self.layers(x.flatten(1))
        return out


@dataclass(slots=True, frozen=True)
class Stretches:
    """How sequences with episode starts inside run in one call of a recurrent layer.

    Each stretch of a copy's steps from an episode start (or the sequence's first step) to
    the next start becomes a sequence of its own, from the copy's state (its first stretch)
    or from zero; they run side by side, padded to the longest, and the outputs are read
    back in place. On a CPU this costs about what the uninterrupted sequences do (a wider
    batch is nearly free; every extra call of the layer is not). The layout depends on the
    starts alone: the networks that read the same sequences share it.
    """

    carried: torch.Tensor
    """Per stretch, 1.0 where it goes on from its copy's state, 0.0 where it starts from
    zero."""
    copy: torch.Tensor
    """Each stretch's copy, (M,)."""
    rows: torch.Tensor | None = None
    """The padded stretches' steps, (longest, M); ``None`` when no start comes after the
    first step (the stretches are the copies' sequences as they are)."""
    copies: torch.Tensor | None = None
    """The padded stretches' copies, (longest, M)."""
    place: torch.Tensor | None = None
    """Each step's place in its stretch, (T, B)."""
    stretch: torch.Tensor | None = None
    """Each step's stretch, (T, B)."""

    @classmethod
    def of(cls, starts: torch.Tensor) -> Stretches:
        """The layout for sequences whose episode starts are ``starts``, (T, B) bool."""
        steps, copies = starts.shape
        keep = (~starts[0]).float()
        begins = starts.clone()
        begins[0] = True
        if int(begins.sum()) == copies:
            return cls(carried=keep, copy=torch.arange(copies, device=starts.device))
        copy, first = torch.nonzero(begins.T, as_tuple=True)  # column by column
        following = torch.full_like(first, steps)
        following[:-1] = torch.where(copy[1:] == copy[:-1], first[1:], following[:-1])
        longest = int((following - first).max())
        offsets = torch.arange(longest, device=starts.device)[:, None]
        rows = (first[None] + offsets).clamp(max=steps - 1)
        counts = begins.sum(0)
        stretch = begins.long().cumsum(0) - 1 + (counts.cumsum(0) - counts)[None]
        return cls(
            carried=(first == 0).float() * keep[copy],
            copy=copy,
            rows=rows,
            copies=copy[None].expand_as(rows),
            place=torch.arange(steps, device=starts.device)[:, None] - first[stretch],
            stretch=stretch,
        )


class Recurrence(nn.Module):
    """An LSTM or GRU over time-major sequences, with one hidden state per sequence that is
    zeroed where an episode starts.

    The hidden state of a batch is one tensor ``(B, parts, layers, size)`` (`state_shape`:
    an LSTM's h and c, a GRU's h), batch first so that it is stored and indexed per
    environment copy like any other column.

    Args:
        in_features: The width of the embeddings.
        params: The cell, its size and its layers.
    """

    def __init__(self, in_features: int, params: RecurrentParameters) -> None:
        super().__init__()
        self.lstm = params.cell == "lstm"
        cell = nn.LSTM if self.lstm else nn.GRU
        self.rnn = cell(in_features, params.size, params.layers)
        self.state_shape = params.state_shape
        self.out_features = params.size

    def forward(
        self,
        x: torch.Tensor,
        hidden: torch.Tensor,
        starts: torch.Tensor | None,
        before_starts: dict[int, torch.Tensor] | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Run ``x`` (T, B, F) from ``hidden`` (B, parts, layers, size); ``starts`` (T, B)
        marks the steps that begin an episode, where the state is zeroed first. Returns the
        outputs (T, B, size) and the state after the last step; ``before_starts``, if given,
        receives the state of every copy before the zeroing at each step ``t > 0`` where some
        copy starts (the state after step ``t - 1``: what its successor is valued from).

        The sequence is cut only at the steps where some copy starts an episode: between
        them the whole stretch runs in one call of the recurrent layer, which is exactly the
        step-by-step recursion, only faster.
        """
        steps = len(x)
        cuts = [0, steps]
        if starts is not None:
            anywhere = starts.any(dim=1)
            if bool(anywhere.any()):
                cuts = sorted({0, steps, *torch.nonzero(anywhere).flatten().tolist()})
        outputs = []
        for begin, end in itertools.pairwise(cuts):
            if starts is not None and begin < steps:
                keep = ~starts[begin]
                if before_starts is not None and begin > 0:
                    before_starts[begin] = hidden
                if not bool(keep.all()):
                    hidden = hidden * keep.to(hidden.dtype)[:, None, None, None]
            out, hidden = self._run(x[begin:end], hidden)
            outputs.append(out)
        return (outputs[0] if len(outputs) == 1 else torch.cat(outputs)), hidden

    def outputs(self, x: torch.Tensor, hidden: torch.Tensor, layout: Stretches) -> torch.Tensor:
        """The outputs of `forward` (T, B, size), without the state after the last step,
        in one call of the recurrent layer whatever the episode starts (`Stretches`)."""
        if layout.rows is None:  # no start after the first step: one sequence per copy
            return self._run(x, hidden * layout.carried[:, None, None, None])[0]
        padded = x[layout.rows, layout.copies]
        initial = hidden[layout.copy] * layout.carried[:, None, None, None]
        out, _ = self._run(padded, initial)
        return out[layout.place, layout.stretch]

    def step(self, x: torch.Tensor, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """One step for a batch (B, F) from ``hidden``: the outputs (B, size) and the state
        after it. Acting takes one step at a time, where the cell ops of each layer cost
        less than half of a sequence call of one step (the same arithmetic)."""
        rnn, layers = self.rnn, []
        for layer in range(rnn.num_layers):
            weights = [getattr(rnn, f"{name}_l{layer}") for name in self._weight_names]
            if self.lstm:
                h, c = torch.lstm_cell(x, (hidden[:, 0, layer], hidden[:, 1, layer]), *weights)
                layers.append(torch.stack([h, c], dim=1))
            else:
                h = torch.gru_cell(x, hidden[:, 0, layer], *weights)
                layers.append(h[:, None])
            x = h
        return x, torch.stack(layers, dim=2)

    _weight_names = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")

    def _run(self, x: torch.Tensor, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """One call of the recurrent layer, converting the state to its layout and back."""
        state = hidden.permute(1, 2, 0, 3)  # (parts, layers, B, size)
        if self.lstm:
            out, (h, c) = self.rnn(x, (state[0].contiguous(), state[1].contiguous()))
            after = torch.stack([h, c])
        else:
            out, h = self.rnn(x, state[0].contiguous())
            after = h[None]
        return out, after.permute(2, 0, 1, 3)


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
        embedded = [self.embedders[key](inputs[key]) for key in self.input_keys]
        return embedded[0] if len(embedded) == 1 else torch.cat(embedded, dim=1)

    def _heads(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        x = self.middleware(x)
        return {name: head(x) for name, head in zip(self.head_names, self.heads, strict=True)}

    def forward(self, inputs: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        if self.recurrence is not None:
            raise CoachError(
                "a recurrent network is called on sequences with a hidden state (Model.unroll)"
            )
        return self._heads(self._embed(inputs))

    def sequence_outputs(
        self, inputs: dict[str, torch.Tensor], hidden: torch.Tensor, layout: Stretches
    ) -> dict[str, torch.Tensor]:
        """The heads' outputs over sequences, as `unroll` gives them, without the state after
        them: what learning from stored sequences needs, in one call of the recurrent layer
        (the sequences' episode starts laid out by `Stretches.of`)."""
        assert self.recurrence is not None, "a feed-forward model is called directly"
        steps, batch = next(iter(inputs[k] for k in self.input_keys)).shape[:2]
        flat = {k: inputs[k].flatten(0, 1) for k in self.input_keys}
        x = self._embed(flat).unflatten(0, (steps, batch))
        x = self.recurrence.outputs(x, hidden, layout)
        outputs = self._heads(x.flatten(0, 1))
        return {k: v.unflatten(0, (steps, batch)) for k, v in outputs.items()}

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
        assert self.recurrence is not None, "a feed-forward model is called directly"
        steps, batch = next(iter(inputs[k] for k in self.input_keys)).shape[:2]
        flat = {k: inputs[k].flatten(0, 1) for k in self.input_keys}
        x = self._embed(flat).unflatten(0, (steps, batch))
        x, hidden = self.recurrence(x, hidden, starts, before_starts)
        outputs = self._heads(x.flatten(0, 1))
        return {k: v.unflatten(0, (steps, batch)) for k, v in outputs.items()}, hidden


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
