"""Unit tests for coach/networks: Model (model.py) and NetworkWrapper (network_wrapper.py)."""

from __future__ import annotations

import io

import pytest
import torch
import torch.nn.functional as F
from gymnasium import spaces

from coach.errors import CoachError
from coach.networks.model import Model, initialize
from coach.networks.network_wrapper import NetworkWrapper
from coach.networks.parameters import (
    HeadParameters,
    InputEmbedderParameters,
    MiddlewareParameters,
    NetworkParameters,
    QHeadParameters,
)

OBSERVATION_SPACE = spaces.Dict(
    {
        "observation": spaces.Box(-1.0, 1.0, shape=(4,)),
        "desired_goal": spaces.Box(-1.0, 1.0, shape=(2,)),
        "image": spaces.Box(0, 255, shape=(3, 3), dtype="uint8"),
    }
)
ACTION_SPACE = spaces.Discrete(3)


def _params(**kwargs: object) -> NetworkParameters:
    kwargs.setdefault("middleware", MiddlewareParameters(scheme=[16]))
    return NetworkParameters(**kwargs)  # type: ignore[arg-type]


def _wrapper(seed: int = 0, **kwargs: object) -> NetworkWrapper:
    return NetworkWrapper(
        _params(**kwargs),
        OBSERVATION_SPACE,
        ACTION_SPACE,
        torch.device("cpu"),
        torch.Generator().manual_seed(seed),
    )


def _inputs(batch: int = 5, seed: int = 0) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return {
        "observation": torch.rand(batch, 4, generator=g) * 2 - 1,
        "desired_goal": torch.rand(batch, 2, generator=g) * 2 - 1,
        "image": torch.randint(0, 256, (batch, 3, 3), generator=g, dtype=torch.uint8),
    }


def _state(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


def _same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


# -- Model --------------------------------------------------------------------------------


def test_model_reads_only_its_declared_keys() -> None:
    model = Model(_params(), OBSERVATION_SPACE, ACTION_SPACE)
    assert model.input_keys == ["observation"]
    inputs = _inputs()
    with_extras = model(inputs)["q"]
    # Anything else in the dictionary is ignored, even if it would not fit.
    only_declared = model({"observation": inputs["observation"]})["q"]
    junk = model({"observation": inputs["observation"], "desired_goal": torch.zeros(5, 99)})["q"]
    assert torch.equal(with_extras, only_declared)
    assert torch.equal(with_extras, junk)


def test_model_with_two_embedders_reads_both() -> None:
    params = _params(
        input_embedders={
            "observation": InputEmbedderParameters(scheme=[8]),
            "desired_goal": InputEmbedderParameters(),
        }
    )
    model = Model(params, OBSERVATION_SPACE, ACTION_SPACE)
    assert model.input_keys == ["observation", "desired_goal"]
    assert model.embedders["observation"].out_features == 8
    assert model.embedders["desired_goal"].out_features == 2
    inputs = _inputs()
    changed = dict(inputs, desired_goal=inputs["desired_goal"] + 1.0)
    assert not torch.equal(model(inputs)["q"], model(changed)["q"])
    with pytest.raises(KeyError):
        model({"observation": inputs["observation"]})


def test_a_missing_key_raises_at_build() -> None:
    params = _params(input_embedders={"achieved_goal": InputEmbedderParameters()})
    with pytest.raises(CoachError) as error:
        Model(params, OBSERVATION_SPACE, ACTION_SPACE)
    assert "achieved_goal" in str(error.value)
    assert "desired_goal" in str(error.value)


@pytest.mark.parametrize("batch", [1, 7])
def test_outputs_are_named_by_head_with_shape_b_by_actions(batch: int) -> None:
    params = _params(heads=[QHeadParameters(), QHeadParameters(name="q2")])
    model = Model(params, OBSERVATION_SPACE, spaces.Discrete(6))
    outputs = model(_inputs(batch))
    assert list(outputs) == ["q", "q2"]
    for value in outputs.values():
        assert value.shape == (batch, 6)
        assert value.dtype == torch.float32


def test_uint8_inputs_are_rescaled() -> None:
    params = _params(input_embedders={"image": InputEmbedderParameters(input_rescaling=255.0)})
    model = Model(params, OBSERVATION_SPACE, ACTION_SPACE)
    inputs = _inputs()
    expected = model.middleware(inputs["image"].flatten(1).float() / 255.0)
    expected = model.heads[0](expected)
    torch.testing.assert_close(model(inputs)["q"], expected)


@pytest.mark.parametrize(
    ("params", "action_space", "fragment"),
    [
        (_params(heads=[QHeadParameters()]), spaces.Box(-1.0, 1.0, shape=(2,)), "Discrete"),
        (_params(heads=[HeadParameters()]), ACTION_SPACE, "no head for HeadParameters"),
        (
            _params(middleware=MiddlewareParameters(activation="sigmoidish")),
            ACTION_SPACE,
            "sigmoidish",
        ),
    ],
)
def test_unbuildable_networks_raise_coach_error(
    params: NetworkParameters, action_space: spaces.Space, fragment: str
) -> None:
    with pytest.raises(CoachError, match=fragment):
        Model(params, OBSERVATION_SPACE, action_space)


def test_same_seed_same_initial_weights_different_seed_different() -> None:
    a, b, c = _wrapper(seed=1), _wrapper(seed=1), _wrapper(seed=2)
    assert _same(_state(a.online), _state(b.online))
    assert not _same(_state(a.online), _state(c.online))
    inputs = _inputs()
    assert torch.equal(a(inputs)["q"], b(inputs)["q"])


def test_initialization_ignores_the_global_generator() -> None:
    torch.manual_seed(123)
    a = _state(_wrapper(seed=1).online)
    torch.manual_seed(456)
    b = _state(_wrapper(seed=1).online)
    assert _same(a, b)


def test_initialize_bounds_biases_by_fan_in() -> None:
    layer = torch.nn.Linear(16, 4)
    initialize(layer, torch.Generator().manual_seed(0))
    assert layer.bias.abs().max().item() <= 1 / 4
    assert layer.weight.abs().max().item() <= 1 / 4


# -- NetworkWrapper -----------------------------------------------------------------------


def _regression_loss(wrapper: NetworkWrapper, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
    target = torch.tensor([1.0, -1.0, 0.5]).expand(len(inputs["observation"]), 3)
    return F.mse_loss(wrapper(inputs)["q"], target)


def test_train_step_reduces_a_regression_loss() -> None:
    wrapper = _wrapper(learning_rate=1e-2)
    inputs = _inputs(16)
    losses = []
    for _ in range(30):
        loss = _regression_loss(wrapper, inputs)
        losses.append(loss.item())
        assert wrapper.train_step(loss) is None  # no clipping: no norm is computed
    assert losses[-1] < 0.5 * losses[0]
    assert _regression_loss(wrapper, inputs).item() < losses[0]


def test_train_step_returns_the_unclipped_gradient_norm_and_clips() -> None:
    clip = 0.01
    wrapper = _wrapper(gradient_clip_norm=clip)
    reference = _wrapper()  # the same seed: the same weights, no clipping
    inputs = _inputs(8)

    expected_grads = torch.autograd.grad(
        _regression_loss(reference, inputs) * 100, list(reference.online.parameters())
    )
    expected_norm = torch.linalg.vector_norm(torch.stack([g.norm() for g in expected_grads]))
    before = [p.detach().clone() for p in wrapper.online.parameters()]

    norm = wrapper.train_step(_regression_loss(wrapper, inputs) * 100)

    assert norm == pytest.approx(expected_norm.item(), rel=1e-5)
    assert norm > clip
    # The gradients the optimizer stepped with were scaled down to the clip norm...
    clipped = torch.linalg.vector_norm(
        torch.stack([p.grad.norm() for p in wrapper.online.parameters()])
    )
    assert clipped.item() == pytest.approx(clip, rel=1e-3)
    # ...in the same direction as the unclipped ones.
    for p, g in zip(wrapper.online.parameters(), expected_grads, strict=True):
        torch.testing.assert_close(p.grad, g * (clip / expected_norm), rtol=1e-3, atol=1e-9)
    assert any(
        not torch.equal(b, p) for b, p in zip(before, wrapper.online.parameters(), strict=True)
    )


def test_without_a_clip_the_gradients_are_untouched() -> None:
    wrapper = _wrapper()
    reference = _wrapper()  # the same seed: the same weights
    inputs = _inputs(8)
    expected = torch.autograd.grad(
        _regression_loss(reference, inputs) * 100, list(reference.online.parameters())
    )
    assert wrapper.train_step(_regression_loss(wrapper, inputs) * 100) is None
    for p, g in zip(wrapper.online.parameters(), expected, strict=True):
        torch.testing.assert_close(p.grad, g, rtol=0, atol=0)


def _train_once(wrapper: NetworkWrapper) -> None:
    wrapper.train_step(_regression_loss(wrapper, _inputs(8)))


def test_the_target_starts_as_a_frozen_copy() -> None:
    wrapper = _wrapper(create_target_network=True)
    assert wrapper.target is not None
    assert _same(_state(wrapper.target), _state(wrapper.online))
    assert all(not p.requires_grad for p in wrapper.target.parameters())
    _train_once(wrapper)
    assert not _same(_state(wrapper.target), _state(wrapper.online))
    inputs = _inputs()
    target_q = wrapper.target_predict(inputs)["q"]
    assert not target_q.requires_grad
    assert torch.equal(target_q, wrapper.target(inputs)["q"])


def test_update_target_with_tau_one_copies() -> None:
    wrapper = _wrapper(create_target_network=True)
    _train_once(wrapper)
    wrapper.update_target(tau=1.0)
    assert _same(_state(wrapper.target), _state(wrapper.online))
    inputs = _inputs()
    assert torch.equal(wrapper.target_predict(inputs)["q"], wrapper(inputs)["q"])


def test_update_target_with_tau_half_moves_halfway() -> None:
    wrapper = _wrapper(create_target_network=True, learning_rate=0.1)
    old_target = _state(wrapper.target)
    for _ in range(3):
        _train_once(wrapper)
    online = _state(wrapper.online)

    wrapper.update_target(tau=0.5)

    new_target = _state(wrapper.target)
    for key in online:
        assert not torch.equal(online[key], old_target[key]), key
        torch.testing.assert_close(new_target[key], (online[key] + old_target[key]) / 2)


def test_update_target_with_tau_zero_keeps_the_target() -> None:
    wrapper = _wrapper(create_target_network=True)
    old_target = _state(wrapper.target)
    _train_once(wrapper)
    wrapper.update_target(tau=0.0)
    assert _same(_state(wrapper.target), old_target)


def test_without_a_target_the_online_network_predicts() -> None:
    wrapper = _wrapper(create_target_network=False)
    assert wrapper.target is None
    wrapper.update_target()
    inputs = _inputs()
    assert torch.equal(wrapper.target_predict(inputs)["q"], wrapper(inputs)["q"])
    assert "target" not in wrapper.state_dict()


def _through_a_file(state: dict) -> dict:
    """What a checkpoint does with a state dict: save it and load it back."""
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    return torch.load(buffer)


def test_state_dict_round_trip() -> None:
    source = _wrapper(seed=1, create_target_network=True)
    for _ in range(3):
        _train_once(source)
    restored = _wrapper(seed=2, create_target_network=True)
    assert not _same(_state(restored.online), _state(source.online))

    restored.load_state_dict(_through_a_file(source.state_dict()))

    assert _same(_state(restored.online), _state(source.online))
    assert _same(_state(restored.target), _state(source.target))
    # The optimizer's moments came along: the next step is identical.
    _train_once(source)
    _train_once(restored)
    assert _same(_state(restored.online), _state(source.online))


def test_loading_a_live_state_dict_does_not_share_optimizer_state() -> None:
    source = _wrapper(seed=1)
    for _ in range(3):
        _train_once(source)
    restored = _wrapper(seed=2)
    restored.load_state_dict(source.state_dict())
    _train_once(source)
    _train_once(restored)
    assert _same(_state(restored.online), _state(source.online))
