"""Unit tests for coach/networks/model.py: the convolutional embedder."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces

from coach.core.spaces import StackedFrames
from coach.errors import CoachError
from coach.networks.model import Embedder, Model, initialize
from coach.networks.parameters import (
    NATURE_CNN,
    InputEmbedderParameters,
    MiddlewareParameters,
    NetworkParameters,
)

FRAME = spaces.Box(0, 255, shape=(84, 84), dtype=np.uint8)


@pytest.mark.parametrize(
    "space",
    [StackedFrames(FRAME, 4), spaces.Box(0, 255, (4, 84, 84), np.uint8), FRAME],
    ids=["stacked", "chw", "hw"],
)
def test_nature_convolutions_give_3136_features(space: spaces.Box) -> None:
    embedder = Embedder(space, InputEmbedderParameters(conv=NATURE_CNN, input_rescaling=255.0))
    x = torch.as_tensor(np.stack([space.sample() for _ in range(2)]))
    out = embedder(x)
    # 84 -> 20 -> 9 -> 7: 64 channels of 7x7.
    assert out.shape == (2, 64 * 7 * 7) and embedder.out_features == 3136
    assert torch.all(out >= 0)  # relu after the last convolution


def test_an_mlp_follows_the_convolutions() -> None:
    embedder = Embedder(
        spaces.Box(0, 1, (2, 10, 10)), InputEmbedderParameters(conv=[(3, 3, 1)], scheme=[5])
    )
    assert embedder(torch.zeros(7, 2, 10, 10)).shape == (7, 5)


def test_inputs_are_rescaled_before_the_convolutions() -> None:
    space = spaces.Box(0, 255, (1, 3, 3), np.uint8)
    plain = Embedder(space, InputEmbedderParameters(conv=[(1, 3, 1)], activation="tanh"))
    scaled = Embedder(
        space, InputEmbedderParameters(conv=[(1, 3, 1)], activation="tanh", input_rescaling=255)
    )
    scaled.load_state_dict(plain.state_dict())
    x = torch.full((1, 1, 3, 3), 255, dtype=torch.uint8)
    assert torch.allclose(scaled(x), plain(torch.ones(1, 1, 3, 3)))


@pytest.mark.parametrize("shape", [(5,), (2, 3, 4, 5)])
def test_convolutions_refuse_what_is_not_an_image(shape: tuple[int, ...]) -> None:
    with pytest.raises(CoachError, match="convolutions need an image"):
        Embedder(spaces.Box(0, 1, shape), InputEmbedderParameters(conv=[(4, 1, 1)]))


def test_a_convolutional_model_is_seeded() -> None:
    params = NetworkParameters(
        input_embedders={"observation": InputEmbedderParameters(conv=NATURE_CNN)},
        middleware=MiddlewareParameters(scheme=[16]),
    )
    observation = spaces.Dict({"observation": StackedFrames(FRAME, 4)})

    def weights(seed: int) -> torch.Tensor:
        model = Model(params, observation, spaces.Discrete(3))
        initialize(model, torch.Generator().manual_seed(seed))
        conv = model.embedders["observation"].conv[0]  # type: ignore[index]
        bound = 1 / np.sqrt(4 * 8 * 8)
        assert torch.all(conv.bias.abs() <= bound)
        return conv.weight.detach().clone()

    assert torch.equal(weights(0), weights(0))
    assert not torch.equal(weights(0), weights(1))
