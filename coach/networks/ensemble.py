"""Several networks of one architecture as one module: stacked weights, one batched matrix
product per layer for all of them.

Twin critics (TD3, SAC) and critic ensembles run the same small MLP on the same batch once
per member; stacked, each layer is one ``baddbmm`` over ``(members, batch, features)``, the
optimizer one fused step over a few stacked tensors and the target update one ``lerp`` over
them. That is fewer kernels (on a GPU, fewer launches); on a CPU the arithmetic is the same.

Each member keeps its own weights, gradients, Adam moments and gradient clipping: the loss
of a stacked step is the sum of the members' losses, which share no weight, and Adam works
element by element. The sums inside a batched product are not taken in the same order as in
one product per network, so a stacked run's numbers differ from a separate one's in the last
bits, and a stacked run's checkpoints hold the stacked tensors (`NetworkEnsemble`).

Stacked: feed-forward networks of linear layers and activations, whose embedders have no
convolutions and whose heads are linear (a value head, a plain Q or policy-logit head).
"""

from __future__ import annotations

import functools

import torch
from torch import nn

from coach.errors import CoachError
from coach.networks.heads import ScalarHead, run_layer
from coach.networks.model import ACTIVATIONS, Embedder, Model
from coach.networks.network_wrapper import NetworkWrapper, learning_batch

_ELEMENTWISE = tuple(ACTIVATIONS.values())


class StackedLinear(nn.Module):
    """The linear layers of ``N`` members as one: weights (N, out, in), biases (N, 1, out).

    Called on (N, B, in), each member's rows through its own layer: (N, B, out).
    """

    def __init__(self, layers: list[nn.Linear]) -> None:
        super().__init__()
        if any(layer.bias is None for layer in layers):
            raise CoachError("stacked linear layers need biases")
        self.weight = nn.Parameter(torch.stack([layer.weight.detach() for layer in layers]))
        self.bias = nn.Parameter(
            torch.stack([layer.bias.detach() for layer in layers]).unsqueeze(1)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.baddbmm(self.bias, x, self.weight.transpose(1, 2))

    def member(self, index: int, x: torch.Tensor) -> torch.Tensor:
        """Member ``index``'s layer alone on (B, in): a view of its slice of the weights,
        through which its gradients reach the stack."""
        return nn.functional.linear(x, self.weight[index], self.bias[index, 0])


class StackedLayers(nn.Module):
    """A `Layers` (linear layers and activations) of every member, stacked."""

    def __init__(self, members: list[nn.Module]) -> None:
        super().__init__()
        stacked: list[nn.Module] = []
        for layers in zip(*(m._modules.values() for m in members), strict=True):
            first = layers[0]
            if type(first) is nn.Linear:
                stacked.append(StackedLinear(list(layers)))
            elif isinstance(first, _ELEMENTWISE):
                stacked.append(first)  # the same activation for every member
            else:
                raise CoachError(f"cannot stack the layer {type(first).__name__}")
        self.layers = nn.ModuleList(stacked)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = run_layer(layer, x)
        return x

    def member(self, index: int, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer.member(index, x) if isinstance(layer, StackedLinear) else run_layer(layer, x)
        return x


class StackedModel(nn.Module):
    """``N`` feed-forward `Model` s of one architecture as one module.

    Called like a `Model` on a batch (B, ...) that every member reads, it returns each head's
    outputs for every member, (N, B, ...); `member` runs one member alone.
    """

    def __init__(self, members: list[Model]) -> None:
        super().__init__()
        _check_stackable(members)
        first = members[0]
        self.size = len(members)
        self.input_keys = list(first.input_keys)
        self.scales = {key: _embedder(first, key).scale for key in self.input_keys}
        self.offsets = {key: _embedder(first, key).offset for key in self.input_keys}
        self.embedders = nn.ModuleDict(
            {
                key: StackedLayers([_embedder(m, key).layers for m in members])
                for key in self.input_keys
            }
        )
        self.middleware = StackedLayers([m.middleware for m in members])
        self.head_names = list(first.head_names)
        self.scalar_heads = [isinstance(h, ScalarHead) for h in first.heads]
        self.heads = nn.ModuleList(
            StackedLinear([h.linear if isinstance(h, ScalarHead) else h for h in heads])
            for heads in zip(*(m.heads for m in members), strict=True)
        )

    recurrent = False

    def _inputs(self, inputs: dict[str, torch.Tensor]) -> list[torch.Tensor]:
        """Each embedder's input as a `Model` prepares it: float, rescaled, flat."""
        prepared = []
        for key in self.input_keys:
            x = inputs[key]
            if x.dtype != torch.float32:
                x = x.float()
            if self.scales[key] != 1.0:
                x = x * self.scales[key]
            if self.offsets[key] != 0.0:
                x = x - self.offsets[key]
            prepared.append(x if x.dim() == 2 else x.flatten(1))
        return prepared

    def forward(self, inputs: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        # The members read the same rows: a view repeated along the members' axis.
        shared = [x.expand(self.size, *x.shape) for x in self._inputs(inputs)]
        embedded = [
            embedder(x) for embedder, x in zip(self.embedders.values(), shared, strict=True)
        ]
        x = self.middleware(embedded[0] if len(embedded) == 1 else torch.cat(embedded, dim=-1))
        return {
            name: head(x).squeeze(-1) if scalar else head(x)
            for name, scalar, head in zip(
                self.head_names, self.scalar_heads, self.heads, strict=True
            )
        }

    def member(self, index: int, inputs: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """Member ``index``'s outputs alone, (B, ...): what its `Model` would give."""
        embedded = [
            embedder.member(index, x)  # type: ignore[operator]
            for embedder, x in zip(self.embedders.values(), self._inputs(inputs), strict=True)
        ]
        x = self.middleware.member(
            index, embedded[0] if len(embedded) == 1 else torch.cat(embedded, dim=1)
        )
        outputs = {}
        for name, scalar, head in zip(self.head_names, self.scalar_heads, self.heads, strict=True):
            out = head.member(index, x)  # type: ignore[operator]
            outputs[name] = out.squeeze(-1) if scalar else out
        return outputs

    def reset_noise(self, generator: torch.Generator | None) -> bool:
        return False  # no noisy layers are stacked


def _embedder(model: Model, key: str) -> Embedder:
    embedder = model.embedders[key]
    assert isinstance(embedder, Embedder)
    return embedder


def _check_stackable(members: list[Model]) -> None:
    if len(members) < 2:
        raise CoachError(f"an ensemble stacks two networks or more, got {len(members)}")
    for model in members:
        if model.recurrent:
            raise CoachError("recurrent networks are not stacked")
        if model.prior is not None:
            raise CoachError("networks with a randomized prior (prior_scale) are not stacked")
        if any(_embedder(model, key).conv is not None for key in model.input_keys):
            raise CoachError("networks with convolutions are not stacked")
        for head in model.heads:
            if not isinstance(head, ScalarHead) and type(head) is not nn.Linear:
                raise CoachError(
                    f"only linear heads are stacked, not {type(head).__name__} (a value head, "
                    f"a plain Q or policy-logit head)"
                )
    shapes = [{k: tuple(v.shape) for k, v in m.state_dict().items()} for m in members]
    if any(s != shapes[0] for s in shapes[1:]) or any(
        m.input_keys != members[0].input_keys for m in members
    ):
        raise CoachError("the networks of an ensemble have one architecture")


_SHARED = ("learning_rate", "adam_epsilon", "weight_decay", "gradient_clip_norm", "compile")
"""What the members of an ensemble share: one optimizer steps them all."""


class NetworkEnsemble(NetworkWrapper):
    """Freshly built networks (`NetworkWrapper` s of one architecture and optimizer
    settings) as one stacked network, with one target copy and one optimizer.

    Called, it gives every member's outputs (N, B, ...); `member` runs one alone; a
    `train_step` on the sum of the members' losses steps each on its own loss, its
    gradients clipped by its own norm where the networks clip.

    Args:
        members: The networks, as built (their initial weights become the members').
    """

    def __init__(self, members: list[NetworkWrapper]) -> None:
        params = members[0].params
        for name in _SHARED:
            values = {repr(getattr(m.params, name)) for m in members}
            if len(values) > 1:
                raise CoachError(f"the networks of an ensemble share {name}; got {sorted(values)}")
        learning = members[0].optimizer is not None
        if learning and params.create_target_network != (members[0].target is not None):
            raise CoachError("the networks of an ensemble all have a target copy, or none")
        self.size = len(members)
        stacked = StackedModel([m.online for m in members])
        self.stacked = stacked
        """The online network, as its stacked module (`online` is the same object)."""
        # A feed-forward `Model`'s surface (a call, `recurrent`, `reset_noise`), stacked.
        self._adopt(params, stacked, members[0].device, learning)  # type: ignore[arg-type]

    def member(self, index: int, inputs: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """Member ``index``'s outputs alone (B, ...), its gradients reaching the stack (in
        the network's precision, as a call)."""
        forward = functools.partial(self.stacked.member, index)
        if self._bfloat16 and torch.is_grad_enabled() and learning_batch(inputs):
            return self._autocast(forward, inputs)
        return forward(inputs)

    def _clip_and_step(self) -> torch.Tensor | None:
        """Clip each member's gradients by its own norm (where the networks clip) and step;
        the members' norms before clipping, (N,)."""
        assert self.optimizer is not None, "an acting-only network does not learn"
        max_norm = self.params.gradient_clip_norm
        norms = None
        if max_norm is not None:
            grads = [p.grad for p in self._parameters if p.grad is not None]
            squares = torch.stack([g.flatten(1).square().sum(1) for g in grads]).sum(0)
            norms = squares.sqrt()
            # torch's rule, member by member: scale by max_norm / (norm + 1e-6) up to 1.
            scale = (max_norm / (norms + 1e-6)).clamp(max=1.0)
            for g in grads:
                g.mul_(scale.view(-1, *([1] * (g.dim() - 1))))
        self.optimizer.step()
        return norms


__all__ = ["NetworkEnsemble", "StackedLinear", "StackedModel"]
