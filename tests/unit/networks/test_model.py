"""Unit tests for coach/networks/model.py: the convolutional embedder and the recurrent
middleware."""

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
    RecurrentParameters,
)
from coach.networks.recurrence import Stretches

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


VECTOR = spaces.Dict({"observation": spaces.Box(-1, 1, (3,), np.float32)})


def recurrent_model(cell: str, layers: int, seed: int = 0) -> Model:
    params = NetworkParameters(
        middleware=MiddlewareParameters(
            scheme=[16], recurrent=RecurrentParameters(cell=cell, size=8, layers=layers)
        )
    )
    model = Model(params, VECTOR, spaces.Discrete(3))
    initialize(model, torch.Generator().manual_seed(seed))
    return model


@pytest.mark.parametrize(("cell", "layers"), [("lstm", 1), ("lstm", 2), ("gru", 1), ("gru", 3)])
def test_a_sequence_at_once_equals_the_steps_one_by_one(cell: str, layers: int) -> None:
    model = recurrent_model(cell, layers)
    generator = torch.Generator().manual_seed(1)
    steps, batch = 25, 5
    x = torch.randn(steps, batch, 3, generator=generator)
    starts = torch.rand(steps, batch, generator=generator) < 0.2  # episodes start anywhere
    hidden = torch.randn(batch, *model.recurrence.state_shape, generator=generator)  # type: ignore[union-attr]
    whole, after = model.unroll({"observation": x}, hidden, starts)
    outputs, state = [], hidden
    for t in range(steps):
        out, state = model.unroll({"observation": x[t : t + 1]}, state, starts[t : t + 1])
        outputs.append(out["q"])
    torch.testing.assert_close(torch.cat(outputs), whole["q"], atol=1e-6, rtol=0)
    torch.testing.assert_close(state, after, atol=1e-6, rtol=0)
    assert whole["q"].shape == (steps, batch, 3)


def test_the_state_is_zeroed_where_an_episode_starts_and_only_there() -> None:
    model = recurrent_model("lstm", 1)
    x = torch.randn(4, 2, 3)
    hidden = torch.randn(2, *model.recurrence.state_shape)  # type: ignore[union-attr]
    starts = torch.tensor([[False, False], [True, False], [False, False], [False, False]])
    out, _ = model.unroll({"observation": x}, hidden, starts)
    # Copy 0 from step 1 on is what a fresh state gives on its steps 1..3.
    fresh, _ = model.unroll({"observation": x[1:, :1]}, model.initial_state(1))
    torch.testing.assert_close(out["q"][1:, :1], fresh["q"], atol=1e-6, rtol=0)
    # Copy 1 never started: its whole sequence runs from the given state.
    carried, _ = model.unroll({"observation": x[:, 1:]}, hidden[1:])
    torch.testing.assert_close(out["q"][:, 1:], carried["q"], atol=1e-6, rtol=0)


def test_recurrent_layers_are_seeded_and_called_on_sequences() -> None:
    a, b, c = (
        recurrent_model("gru", 2, 0),
        recurrent_model("gru", 2, 0),
        recurrent_model("gru", 2, 1),
    )
    flat = [torch.cat([p.flatten() for p in m.parameters()]) for m in (a, b, c)]
    assert torch.equal(flat[0], flat[1]) and not torch.equal(flat[0], flat[2])
    bound = 1 / 8**0.5  # torch's default range for a hidden size of 8
    assert all(p.abs().max() <= bound for p in a.recurrence.parameters())  # type: ignore[union-attr]
    with pytest.raises(CoachError, match="sequences with a hidden state"):
        a({"observation": torch.zeros(2, 3)})
    assert a.initial_state(4).shape == (4, 1, 2, 8)
    assert recurrent_model("lstm", 2).initial_state(4).shape == (4, 2, 2, 8)


@pytest.mark.parametrize(("cell", "layers"), [("lstm", 1), ("lstm", 2), ("gru", 2)])
@pytest.mark.parametrize("rate", [0.0, 0.1, 0.5], ids=["no-starts", "some", "many"])
def test_sequence_outputs_in_one_call_equal_the_unrolled_ones(
    cell: str, layers: int, rate: float
) -> None:
    model = recurrent_model(cell, layers)
    generator = torch.Generator().manual_seed(2)
    x = torch.randn(16, 6, 3, generator=generator, requires_grad=True)
    starts = torch.rand(16, 6, generator=generator) < rate
    starts[0, 1] = True  # a copy that starts right at the first step
    hidden = torch.randn(6, *model.recurrence.state_shape, generator=generator)  # type: ignore[union-attr]
    unrolled, _ = model.unroll({"observation": x}, hidden, starts)
    padded = model.sequence_outputs({"observation": x}, hidden, Stretches.of(starts))
    torch.testing.assert_close(padded["q"], unrolled["q"], atol=1e-6, rtol=0)
    # The gradients agree too (the padding takes none).
    (grad_unrolled,) = torch.autograd.grad(unrolled["q"].square().sum(), x)
    (grad_padded,) = torch.autograd.grad(padded["q"].square().sum(), x)
    torch.testing.assert_close(grad_padded, grad_unrolled, atol=1e-5, rtol=0)


@pytest.mark.parametrize(("cell", "layers"), [("lstm", 1), ("lstm", 2), ("gru", 1), ("gru", 2)])
def test_a_step_of_acting_equals_a_sequence_of_one(cell: str, layers: int) -> None:
    model = recurrent_model(cell, layers)
    x = torch.randn(5, 3)
    hidden = torch.randn(5, *model.recurrence.state_shape)  # type: ignore[union-attr]
    with torch.no_grad():
        stepped, after = model.step({"observation": x}, hidden)
        unrolled, state = model.unroll({"observation": x[None]}, hidden)
    torch.testing.assert_close(stepped["q"], unrolled["q"][0], atol=1e-6, rtol=0)
    torch.testing.assert_close(after, state, atol=1e-6, rtol=0)
