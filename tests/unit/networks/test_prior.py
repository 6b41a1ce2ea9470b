"""Randomized prior functions (`NetworkParameters.prior_scale`): a frozen random twin added
to the network's outputs, which nothing trains and checkpoints keep."""

from __future__ import annotations

import pytest
import torch
from gymnasium import spaces

from coach.networks.heads import BootstrappedQHeadParameters
from coach.networks.network_wrapper import NetworkWrapper
from coach.networks.parameters import (
    MiddlewareParameters,
    NetworkParameters,
    RecurrentParameters,
)
from coach.validation import InvalidParameter

OBSERVATIONS = spaces.Dict({"observation": spaces.Box(-1.0, 1.0, shape=(4,))})
ACTIONS = spaces.Discrete(3)


def network(seed: int = 0, scale: float = 2.0, **kwargs: object) -> NetworkWrapper:
    params = NetworkParameters(
        middleware=MiddlewareParameters(scheme=[16]), prior_scale=scale, **kwargs
    )  # type: ignore[arg-type]
    params.validate()
    return NetworkWrapper(
        params, OBSERVATIONS, ACTIONS, torch.device("cpu"), torch.Generator().manual_seed(seed)
    )


def inputs(batch: int = 8) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(7)
    return {"observation": torch.rand(batch, 4, generator=g) * 2 - 1}


def prior_tensors(net: NetworkWrapper) -> dict[str, torch.Tensor]:
    return {k: v.clone() for k, v in net.online.state_dict().items() if k.startswith("prior.")}


def test_the_output_is_the_network_plus_the_scaled_prior() -> None:
    net = network(scale=2.5)
    model, prior = net.online, net.online.prior
    assert prior is not None
    x = inputs()
    with torch.no_grad():
        own = model._heads(model._embed(x))["q"]
        twin = prior.twin.forward(x)["q"]
        assert torch.allclose(net(x)["q"], own + 2.5 * twin)
        assert twin.abs().mean() > 0.01  # a random function, not zeros


def test_nothing_trains_the_prior() -> None:
    net = network(create_target_network=True, learning_rate=1e-2)
    before = prior_tensors(net)
    assert before and not any(
        name.startswith("prior.") for name, _ in net.online.named_parameters()
    )  # buffers: the optimizer does not hold them
    x = inputs()
    for _ in range(5):
        loss = (net(x)["q"] - 1.0).pow(2).mean()
        net.train_step(loss)
        net.update_target(0.5)
    after = prior_tensors(net)
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert net.target is not None
    target = {k: v for k, v in net.target.state_dict().items() if k.startswith("prior.")}
    assert all(torch.equal(target[k], after[k]) for k in after)  # the target's prior is the same


def test_the_prior_is_seeded_and_kept_in_checkpoints() -> None:
    a, again, other = network(seed=1), network(seed=1), network(seed=2)
    assert all(torch.equal(v, prior_tensors(again)[k]) for k, v in prior_tensors(a).items())
    assert any(not torch.equal(v, prior_tensors(other)[k]) for k, v in prior_tensors(a).items())
    other.load_state_dict(a.state_dict())
    assert all(torch.equal(v, prior_tensors(other)[k]) for k, v in prior_tensors(a).items())
    x = inputs()
    assert torch.equal(other(x)["q"], a(x)["q"])


def test_each_bootstrapped_head_has_its_own_prior() -> None:
    net = network(heads=[BootstrappedQHeadParameters(num_heads=4)])
    assert net.online.prior is not None
    with torch.no_grad():
        twin = net.online.prior.twin.forward(inputs())["q"]  # (B, heads, A)
    assert twin.shape == (8, 4, 3)
    for i in range(4):
        for j in range(i + 1, 4):
            assert not torch.allclose(twin[:, i], twin[:, j])


def test_bad_scales_and_recurrent_networks_are_refused() -> None:
    with pytest.raises(InvalidParameter, match="prior_scale"):
        network(scale=-1.0)
    recurrent = MiddlewareParameters(scheme=[16], recurrent=RecurrentParameters())
    with pytest.raises(InvalidParameter, match="feed-forward"):
        NetworkParameters(middleware=recurrent, prior_scale=1.0).validate()


def test_without_a_scale_there_is_no_prior() -> None:
    net = network(scale=0.0)
    assert net.online.prior is None and not prior_tensors(net)
