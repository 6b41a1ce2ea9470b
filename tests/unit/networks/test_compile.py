"""A network run through torch.compile (`NetworkParameters.compile`): the same outputs,
gradients and steps as the eager one, its target too; a mode torch does not have is refused.

Compiling costs tens of seconds on a CPU, so the compiled network is built once for the
module and the checks share it.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from gymnasium import spaces

from coach.networks import MiddlewareParameters, NetworkParameters, QHeadParameters
from coach.networks.network_wrapper import NetworkWrapper
from coach.validation import InvalidParameter

OBSERVATIONS = spaces.Dict({"observation": spaces.Box(-1, 1, (4,))})
ACTIONS = spaces.Discrete(3)


def _wrapper(compile: str | None) -> NetworkWrapper:
    params = NetworkParameters(
        middleware=MiddlewareParameters(scheme=[32, 32]),
        heads=[QHeadParameters()],
        create_target_network=True,
        gradient_clip_norm=1.0,
        compile=compile,
    )
    params.validate()
    return NetworkWrapper(
        params, OBSERVATIONS, ACTIONS, torch.device("cpu"), torch.Generator().manual_seed(0)
    )


def _inputs(batch: int, seed: int) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return {"observation": torch.rand(batch, 4, generator=g) * 2 - 1}


@pytest.fixture(scope="module")
def pair() -> tuple[NetworkWrapper, NetworkWrapper]:
    return _wrapper(None), _wrapper("default")


def _loss(network: NetworkWrapper, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
    q = network(inputs)["q"]
    target = network.target_predict(inputs)["q"].max(dim=1).values
    return F.smooth_l1_loss(q[:, 0], 0.5 + 0.9 * target)


def test_compiled_steps_follow_the_eager_ones(pair: tuple[NetworkWrapper, NetworkWrapper]) -> None:
    eager, compiled = pair
    assert compiled._forward is not compiled.online  # it really runs the compiled module
    for step in range(3):  # batches of one (acting) and of 16 (learning): two shapes
        for batch in (1, 16):
            inputs = _inputs(batch, seed=10 * step + batch)
            torch.testing.assert_close(compiled(inputs)["q"], eager(inputs)["q"])
            norms = (
                eager.train_step(_loss(eager, inputs)),
                compiled.train_step(_loss(compiled, inputs)),
            )
            assert norms[0] is not None and norms[1] is not None
            torch.testing.assert_close(norms[1], norms[0], rtol=1e-5, atol=1e-6)
            for a, b in zip(eager.online.parameters(), compiled.online.parameters(), strict=True):
                torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6)
        eager.update_target(0.5)
        compiled.update_target(0.5)
        inputs = _inputs(4, seed=99)
        torch.testing.assert_close(
            compiled.target_predict(inputs)["q"], eager.target_predict(inputs)["q"]
        )


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(InvalidParameter, match="compile"):
        NetworkParameters(compile="fastest").validate()


needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")


@needs_cuda
def test_cuda_graphs_replay_the_eager_network() -> None:
    """``reduce-overhead`` on CUDA: the compiled forward and backward replay as CUDA graphs
    and still compute what the eager network does."""
    params = {"middleware": MiddlewareParameters(scheme=[32, 32]), "heads": [QHeadParameters()]}
    eager, graphed = (
        NetworkWrapper(
            NetworkParameters(**params, compile=mode),  # type: ignore[arg-type]
            OBSERVATIONS,
            ACTIONS,
            torch.device("cuda"),
            torch.Generator().manual_seed(0),
        )
        for mode in (None, "reduce-overhead")
    )
    for seed in range(4):  # the first calls record, the later ones replay
        inputs = {k: v.cuda() for k, v in _inputs(16, seed).items()}
        torch.testing.assert_close(graphed(inputs)["q"], eager(inputs)["q"])
        for network in (eager, graphed):
            network.train_step(network(inputs)["q"].square().mean())
    for a, b in zip(eager.online.parameters(), graphed.online.parameters(), strict=True):
        torch.testing.assert_close(b, a, rtol=1e-4, atol=1e-5)


@needs_cuda
def test_batches_reach_the_gpu_through_pinned_memory() -> None:
    import numpy as np

    from coach.agents.learning import on_device
    from coach.core.types import Batch

    rng = np.random.default_rng(0)
    batch = Batch(
        states={"observation": rng.random((8, 4), dtype=np.float32)},
        actions=rng.integers(0, 3, 8),
        rewards=rng.random(8, dtype=np.float32),
        next_states={"observation": rng.random((8, 4), dtype=np.float32)},
        terminated=np.zeros(8, dtype=bool),
        truncated=np.zeros(8, dtype=bool),
    )
    moved = on_device(batch, torch.device("cuda"))
    torch.cuda.synchronize()
    assert moved.rewards.device.type == "cuda"
    np.testing.assert_array_equal(moved.rewards.cpu().numpy(), batch.rewards)
    np.testing.assert_array_equal(
        moved.states["observation"].cpu().numpy(), batch.states["observation"]
    )
