"""Unit tests for coach/networks/ensemble.py: stacked networks give each member's outputs,
and a stacked step moves each member as a step of its own would (its own loss, its own
clipping, its own Adam moments), on every device this machine has."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F
from gymnasium import spaces

from coach.errors import CoachError
from coach.networks.ensemble import NetworkEnsemble, StackedModel
from coach.networks.heads import QHeadParameters, VHeadParameters
from coach.networks.network_wrapper import NetworkWrapper
from coach.networks.parameters import (
    InputEmbedderParameters,
    MiddlewareParameters,
    NetworkParameters,
    RecurrentParameters,
)
from tests.devices import DEVICES

OBSERVATIONS = spaces.Dict(
    {
        "observation": spaces.Box(-1.0, 1.0, (5,)),
        "image": spaces.Box(0, 255, (4, 4), dtype="uint8"),
        "action": spaces.Box(-1.0, 1.0, (2,)),
    }
)


def _critic(**kwargs: object) -> NetworkParameters:
    """A Q(s, a) network: two inputs, one through an MLP of its own, rescaled pixels."""
    kwargs.setdefault(
        "input_embedders",
        {
            "observation": InputEmbedderParameters(scheme=[8]),
            "image": InputEmbedderParameters(input_rescaling=255.0),
            "action": InputEmbedderParameters(),
        },
    )
    kwargs.setdefault("middleware", MiddlewareParameters(scheme=[16, 16], activation="tanh"))
    kwargs.setdefault("heads", [VHeadParameters(name="q")])
    return NetworkParameters(**kwargs)  # type: ignore[arg-type]


def _members(
    count: int = 2, device: str = "cpu", learning: bool = True, **kwargs: object
) -> list[NetworkWrapper]:
    generator = torch.Generator().manual_seed(0)
    return [
        NetworkWrapper(
            _critic(**kwargs),
            OBSERVATIONS,
            spaces.Discrete(3),
            torch.device(device),
            generator,
            learning,
        )
        for _ in range(count)
    ]


def _inputs(batch: int = 6, seed: int = 0, device: str = "cpu") -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    inputs = {
        "observation": torch.rand(batch, 5, generator=g) * 2 - 1,
        "image": torch.randint(0, 256, (batch, 4, 4), generator=g, dtype=torch.uint8),
        "action": torch.rand(batch, 2, generator=g) * 2 - 1,
    }
    return {k: v.to(device) for k, v in inputs.items()}


@pytest.mark.parametrize("device", DEVICES)
def test_stacked_outputs_are_each_members_outputs(device: str) -> None:
    members = _members(3, device)
    expected = [m(_inputs(device=device))["q"] for m in members]
    ensemble = NetworkEnsemble(members)
    stacked = ensemble(_inputs(device=device))["q"]
    assert stacked.shape == (3, 6)
    for i, q in enumerate(expected):
        torch.testing.assert_close(stacked[i], q)
        torch.testing.assert_close(ensemble.member(i, _inputs(device=device))["q"], q)
    torch.testing.assert_close(ensemble.target_predict(_inputs(device=device))["q"], stacked)


def test_a_plain_q_head_is_stacked_with_its_actions_axis() -> None:
    members = _members(2, heads=[QHeadParameters()])
    expected = torch.stack([m(_inputs())["q"] for m in members])
    stacked = NetworkEnsemble(members)(_inputs())["q"]
    assert stacked.shape == (2, 6, 3)
    torch.testing.assert_close(stacked, expected)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("clip", [None, 0.05])
def test_a_stacked_step_moves_each_member_as_its_own_step_would(
    device: str, clip: float | None
) -> None:
    """The sum of the members' losses, one optimizer over the stack, clipping member by
    member: each member's weights follow those of a network stepped alone, step after step
    (weight decay and Adam's moments included)."""
    separate = _members(2, device, gradient_clip_norm=clip, weight_decay=0.01)
    ensemble = NetworkEnsemble(copy.deepcopy(separate))
    for step in range(5):
        inputs = _inputs(seed=step, device=device)
        targets = torch.randn(2, 6, generator=torch.Generator().manual_seed(step)).to(device)
        norms = [
            m.train_step(F.mse_loss(m(inputs)["q"], targets[i])) for i, m in enumerate(separate)
        ]
        q = ensemble(inputs)["q"]
        stacked_norms = ensemble.train_step((q - targets).square().mean(1).sum())
        if clip is None:
            assert stacked_norms is None and norms == [None, None]
        else:
            assert stacked_norms is not None
            torch.testing.assert_close(stacked_norms, torch.stack(norms))  # type: ignore[arg-type]
            assert (stacked_norms > clip).all()  # the clipping is at work
        for i, member in enumerate(separate):
            torch.testing.assert_close(ensemble.member(i, inputs)["q"], member(inputs)["q"])


def test_the_targets_move_by_tau_member_by_member() -> None:
    separate = _members(2)
    ensemble = NetworkEnsemble(copy.deepcopy(separate))
    inputs = _inputs()
    for member in separate:
        member.train_step(member(inputs)["q"].square().mean())
    ensemble.train_step(ensemble(inputs)["q"].square().mean(1).sum())
    for member in separate:
        member.update_target(0.3)
    ensemble.update_target(0.3)
    expected = torch.stack([m.target_predict(inputs)["q"] for m in separate])
    torch.testing.assert_close(ensemble.target_predict(inputs)["q"], expected)


def test_a_checkpoint_round_trip_continues_the_same_steps() -> None:
    ensemble = NetworkEnsemble(_members(2))
    inputs = _inputs()
    ensemble.train_step(ensemble(inputs)["q"].square().mean(1).sum())
    saved = copy.deepcopy(ensemble.state_dict())
    restored = NetworkEnsemble(_members(2))
    restored.load_state_dict(saved)
    for network in (ensemble, restored):
        network.train_step(network(inputs)["q"].square().mean(1).sum())
        network.update_target(0.5)
    torch.testing.assert_close(restored(inputs)["q"], ensemble(inputs)["q"], rtol=0, atol=0)
    torch.testing.assert_close(
        restored.target_predict(inputs)["q"], ensemble.target_predict(inputs)["q"], rtol=0, atol=0
    )


def test_an_acting_only_ensemble_has_no_optimizer_and_no_target() -> None:
    ensemble = NetworkEnsemble(_members(2, learning=False))
    assert ensemble.optimizer is None and ensemble.target is None
    assert ensemble(_inputs())["q"].shape == (2, 6)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"middleware": MiddlewareParameters(scheme=[8], recurrent=RecurrentParameters())},
            "recurrent",
        ),
        ({"input_embedders": {"image": InputEmbedderParameters(conv=[(2, 2, 1)])}}, "convolutions"),
        ({"heads": [QHeadParameters(dueling=True)]}, "only linear heads"),
    ],
)
def test_what_cannot_be_stacked_is_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(CoachError, match=message):
        NetworkEnsemble(_members(2, **kwargs))


def test_members_with_their_own_optimizer_settings_are_refused() -> None:
    members = [_members(1)[0], _members(1, learning_rate=0.5)[0]]
    with pytest.raises(CoachError, match="share learning_rate"):
        NetworkEnsemble(members)


def test_one_network_is_not_an_ensemble() -> None:
    with pytest.raises(CoachError, match="two networks or more"):
        StackedModel([_members(1)[0].online])
