"""Unit tests for a network's ``precision`` (coach/networks/network_wrapper.py): bfloat16
products on learning's batches, float32 weights, gradients, optimizer and outputs, float32
acting on a few rows."""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn.functional as F
from gymnasium import spaces

from coach.networks.ensemble import NetworkEnsemble
from coach.networks.heads import VHeadParameters
from coach.networks.network_wrapper import NetworkWrapper, learning_batch, native_bfloat16
from coach.networks.parameters import AUTOCAST_ROWS, MiddlewareParameters, NetworkParameters
from coach.validation import InvalidParameter
from tests.devices import DEVICES

OBSERVATIONS = spaces.Dict({"observation": spaces.Box(-1.0, 1.0, (6,))})


def _network(precision: str, device: str = "cpu", seed: int = 0) -> NetworkWrapper:
    params = NetworkParameters(
        middleware=MiddlewareParameters(scheme=[64, 64]),
        heads=[VHeadParameters(name="v")],
        create_target_network=True,
        precision=precision,
    )
    params.validate()
    generator = torch.Generator().manual_seed(seed)
    return NetworkWrapper(params, OBSERVATIONS, spaces.Discrete(2), torch.device(device), generator)


def _inputs(rows: int, device: str = "cpu") -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(rows)
    return {"observation": (torch.rand(rows, 6, generator=g) * 2 - 1).to(device)}


@pytest.mark.parametrize("device", DEVICES)
def test_learning_batches_run_in_bfloat16_with_float32_outputs(device: str) -> None:
    exact, low = _network("float32", device), _network("bfloat16", device)
    inputs = _inputs(AUTOCAST_ROWS, device)
    for call in ("__call__", "target_predict"):  # a pass with gradients, the target's
        expected = getattr(exact, call)(inputs)["v"]
        got = getattr(low, call)(inputs)["v"]
        assert got.dtype == torch.float32
        assert not torch.equal(got, expected)  # bfloat16 products round differently
        torch.testing.assert_close(got, expected, rtol=0.05, atol=0.02)


def test_acting_stays_float32() -> None:
    """Without gradients (acting, evaluating) on any batch, or on a few rows."""
    exact, low = _network("float32"), _network("bfloat16")
    inputs = _inputs(AUTOCAST_ROWS - 1)
    assert torch.equal(low(inputs)["v"], exact(inputs)["v"])
    with torch.no_grad():
        inputs = _inputs(1000)
        assert torch.equal(low(inputs)["v"], exact(inputs)["v"])


def test_a_traced_batch_is_no_learning_batch() -> None:
    """Under ``torch.jit.trace`` (a TorchScript export) a batch of any size stays float32:
    the exported policy's batch size stays free."""
    inputs = _inputs(AUTOCAST_ROWS)
    seen: list[bool] = []

    def probe(x: torch.Tensor) -> torch.Tensor:
        seen.append(learning_batch({"observation": x}))
        return x * 2.0

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # as coach export traces
        torch.jit.trace(probe, inputs["observation"], check_trace=False)
    assert learning_batch(inputs) and seen and not any(seen)


@pytest.mark.parametrize("device", DEVICES)
def test_weights_gradients_and_moments_stay_float32_and_learn(device: str) -> None:
    network = _network("bfloat16", device)
    inputs = _inputs(64, device)
    target = inputs["observation"].sum(1)
    losses = []
    for _ in range(60):
        loss = F.mse_loss(network(inputs)["v"], target)
        network.train_step(loss)
        losses.append(loss.item())
    assert losses[-1] < 0.2 * losses[0]
    for parameter in network.online.parameters():
        assert parameter.dtype == torch.float32 and parameter.grad is not None
        assert parameter.grad.dtype == torch.float32
    state = network.optimizer.state_dict()["state"]  # type: ignore[union-attr]
    assert all(s["exp_avg"].dtype == torch.float32 for s in state.values())


def test_the_same_seed_gives_the_same_numbers() -> None:
    runs = []
    for _ in range(2):
        network = _network("bfloat16")
        for rows in (64, 128, 64):
            inputs = _inputs(rows)
            network.train_step(network(inputs)["v"].square().mean())
        runs.append(network(_inputs(40))["v"])
    assert torch.equal(runs[0], runs[1])


def test_stacked_networks_take_the_precision_too() -> None:
    ensemble = NetworkEnsemble([_network("bfloat16", seed=s) for s in (0, 1)])
    separate = [_network("float32", seed=s) for s in (0, 1)]
    inputs = _inputs(AUTOCAST_ROWS)
    got = ensemble(inputs)["v"]
    assert got.dtype == torch.float32
    torch.testing.assert_close(
        ensemble.member(1, inputs)["v"], separate[1](inputs)["v"], rtol=0.05, atol=0.02
    )
    with torch.no_grad():  # acting: float32, as the separate network
        torch.testing.assert_close(ensemble.member(1, inputs)["v"], separate[1](inputs)["v"])
    torch.testing.assert_close(
        got, torch.stack([n(inputs)["v"] for n in separate]), rtol=0.05, atol=0.02
    )


@pytest.mark.parametrize("device", DEVICES)
def test_auto_is_bfloat16_where_the_device_multiplies_it_natively(device: str) -> None:
    auto, low = _network("auto", device), _network("bfloat16", device)
    inputs = _inputs(AUTOCAST_ROWS, device)
    if native_bfloat16(torch.device(device)):
        assert torch.equal(auto(inputs)["v"], low(inputs)["v"])
    else:
        assert torch.equal(auto(inputs)["v"], _network("float32", device)(inputs)["v"])


def test_an_unknown_precision_is_refused() -> None:
    with pytest.raises(InvalidParameter, match="precision"):
        NetworkParameters(precision="float16").validate()
