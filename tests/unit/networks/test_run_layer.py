"""`run_layer`, the shortcut around ``nn.Module.__call__`` kept by measure: what it relies on
in the torch installed, checked so that a torch that moved it fails here, loudly."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from coach.networks.heads import NoisyLinear, run_layer
from coach.networks.model import Layers, mlp


def _input(features: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(7, features, generator=torch.Generator().manual_seed(seed))


def test_a_linear_layer_keeps_its_weight_and_bias_in_its_parameters_dict() -> None:
    # run_layer reads nn.Linear's _parameters: torch's layout of them, on this torch.
    for bias in (True, False):
        layer = nn.Linear(5, 3, bias=bias)
        assert list(layer._parameters) == ["weight", "bias"]
        assert layer._parameters["weight"] is layer.weight
        assert layer._parameters["bias"] is layer.bias


@pytest.mark.parametrize(
    "layer",
    [
        nn.Linear(5, 3),
        nn.Linear(5, 3, bias=False),
        nn.ReLU(),
        nn.ReLU(inplace=True),
        nn.Tanh(),
        nn.ELU(),
        NoisyLinear(5, 3),
    ],
    ids=lambda layer: repr(layer),
)
def test_a_layer_run_by_run_layer_computes_what_calling_it_computes(layer: nn.Module) -> None:
    def run(shortcut: bool) -> list[torch.Tensor | None]:
        """The output and the gradients of the input and of the layer's parameters."""
        layer.zero_grad(set_to_none=True)
        x = _input(5).requires_grad_()
        out = run_layer(layer, x.clone()) if shortcut else layer(x.clone())
        out.square().sum().backward()
        return [out.detach(), x.grad, *(p.grad for p in layer.parameters())]

    stock, shortcut = run(False), run(True)
    assert all(
        a is not None and b is not None and torch.equal(a, b)
        for a, b in zip(stock, shortcut, strict=True)
    )


def test_layers_compute_what_an_nn_sequential_of_the_same_layers_computes() -> None:
    torch.manual_seed(0)
    layers, _ = mlp(6, [16, 8], "relu")
    assert isinstance(layers, Layers)
    stock = nn.Sequential(*layers)
    x = _input(6, seed=1)
    assert torch.equal(layers(x), stock(x))
    assert list(layers.state_dict()) == list(stock.state_dict())


def test_hooks_on_the_layers_run_and_hooks_on_a_layer_inside_them_do_not() -> None:
    layers, _ = mlp(6, [4], "tanh")
    seen: list[str] = []
    layers.register_forward_hook(lambda *_: seen.append("layers"))
    layers[0].register_forward_hook(lambda *_: seen.append("inner"))
    layers(_input(6))
    assert seen == ["layers"]
