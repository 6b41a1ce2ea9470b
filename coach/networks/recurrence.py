"""The recurrent layer of a middleware: an LSTM or GRU over time-major sequences, with one
hidden state per sequence that is zeroed where an episode starts.

Three ways through it, one per use: a step of acting (`Recurrence.step`, the cell ops of
each layer), sequences with the state after them (`Recurrence.forward`, which R2D2 needs
for its successors), and sequences for learning (`Recurrence.outputs`, every sequence in
one call of the layer, laid out by `Stretches`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import torch
from torch import nn

from coach.networks.parameters import RecurrentParameters


def scaled_state(hidden: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    """Hidden states (B, parts, layers, size) scaled per copy by ``factor`` (B,): 0 zeroes
    a copy's state (its episode starts), 1 keeps it."""
    return hidden * factor.to(hidden.dtype)[:, None, None, None]


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
                    hidden = scaled_state(hidden, keep)
            out, hidden = self._run(x[begin:end], hidden)
            outputs.append(out)
        return (outputs[0] if len(outputs) == 1 else torch.cat(outputs)), hidden

    def outputs(self, x: torch.Tensor, hidden: torch.Tensor, layout: Stretches) -> torch.Tensor:
        """The outputs of `forward` (T, B, size), without the state after the last step,
        in one call of the recurrent layer whatever the episode starts (`Stretches`)."""
        if layout.rows is None:  # no start after the first step: one sequence per copy
            return self._run(x, scaled_state(hidden, layout.carried))[0]
        padded = x[layout.rows, layout.copies]
        initial = scaled_state(hidden[layout.copy], layout.carried)
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
