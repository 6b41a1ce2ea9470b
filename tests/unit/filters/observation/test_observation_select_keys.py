"""Unit tests for coach/filters/observation/select_keys.py, alone and in an InputFilter."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.observation.clipping import ObservationClippingFilter
from coach.filters.observation.select_keys import ObservationSelectKeysFilter
from coach.filters.pipeline import InputFilter

ROBOT = spaces.Dict(
    {
        "observation": spaces.Box(-10.0, 10.0, shape=(4,), dtype=np.float32),
        "achieved_goal": spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32),
        "desired_goal": spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32),
    }
)
PIXELS = spaces.Dict(
    {
        "pixels": spaces.Box(0, 255, shape=(6, 6, 3), dtype=np.uint8),
        "state": spaces.Box(-np.inf, np.inf, shape=(3,), dtype=np.float64),
        "step": spaces.Discrete(100),
    }
)
# (space, keys)
CASES = [
    (ROBOT, ["observation", "desired_goal"]),
    (ROBOT, ["desired_goal", "observation"]),
    (PIXELS, ["pixels"]),
    (PIXELS, ["step", "state"]),
]
IDS = ["robot-2", "robot-2-reversed", "pixels-1", "pixels-2-with-discrete"]


def _batch(space: spaces.Dict, n: int = 3) -> dict[str, np.ndarray]:
    space.seed(8)
    samples = [space.sample() for _ in range(n)]
    return {k: np.stack([s[k] for s in samples]) for k in space.spaces}


@pytest.mark.parametrize(("space", "keys"), CASES, ids=IDS)
def test_keeps_the_keys_in_the_given_order(space: spaces.Dict, keys: list[str]) -> None:
    f = ObservationSelectKeysFilter(keys)
    out_space = f.output_space(space)
    batch = _batch(space)
    original = copy.deepcopy(batch)
    out = f.filter(batch)
    assert list(out) == keys
    for key in keys:
        assert out[key] is batch[key]
    assert set(batch) == set(space.spaces)  # the given dictionary keeps every key
    assert all(np.array_equal(batch[k], original[k]) for k in batch)
    assert all(out_space.contains({k: v[i] for k, v in out.items()}) for i in range(3))
    started = f.start_episodes(batch, np.array([0, 2]))
    assert list(started) == keys


@pytest.mark.parametrize(("space", "keys"), CASES, ids=IDS)
def test_output_space_has_only_the_keys_and_the_input_is_untouched(
    space: spaces.Dict, keys: list[str]
) -> None:
    before = copy.deepcopy(space)
    out_space = ObservationSelectKeysFilter(keys).output_space(space)
    assert isinstance(out_space, spaces.Dict)
    assert list(out_space.spaces) == keys
    for key in keys:
        assert out_space[key] == space[key]
        assert out_space[key] is not space[key]
    assert space == before and list(space.spaces) == list(before.spaces)


def test_refuses_missing_keys_naming_the_available_ones() -> None:
    with pytest.raises(CoachError) as error:
        ObservationSelectKeysFilter(["observation", "goal"]).output_space(ROBOT)
    message = str(error.value)
    assert message.startswith("ObservationSelectKeysFilter selects ['goal'], which the")
    assert "['achieved_goal', 'desired_goal', 'observation']" in message
    assert message.endswith(f"in {ROBOT}")


@pytest.mark.parametrize(
    "space", [spaces.Box(0, 1, shape=(3,)), spaces.Tuple([spaces.Discrete(2)])], ids=str
)
def test_refuses_a_space_that_is_not_a_dict_naming_both(space: spaces.Space) -> None:
    with pytest.raises(CoachError) as error:
        ObservationSelectKeysFilter(["observation"]).output_space(space)
    assert str(error.value) == (
        f"ObservationSelectKeysFilter needs a Dict observation space, got {space}"
    )


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ("observation", "keys is a list of key names"),
        ([1, "observation"], "keys is a list of key names"),
        ([], "at least one key, each once"),
        (["observation", "observation"], "at least one key, each once"),
    ],
)
def test_refuses_nonsense_keys(keys: object, message: str) -> None:
    with pytest.raises(CoachError, match=message):
        ObservationSelectKeysFilter(keys)  # type: ignore[arg-type]


def test_keeps_no_state_and_repr_reproduces_it() -> None:
    f = ObservationSelectKeysFilter(("desired_goal", "observation"))
    assert repr(f) == "ObservationSelectKeysFilter(['desired_goal', 'observation'])"
    again = eval(repr(f), {"ObservationSelectKeysFilter": ObservationSelectKeysFilter})
    assert again.keys == f.keys
    assert f.state_dict() == {}
    f.load_state_dict({})


# -- in an InputFilter --------------------------------------------------------------------


def _pipeline() -> InputFilter:
    return InputFilter(
        select_keys=ObservationSelectKeysFilter(["observation", "desired_goal"]),
        observation_filters={"observation": [ObservationClippingFilter(-1.0, 1.0)]},
    )


def test_bind_selects_the_keys_before_the_per_key_filters() -> None:
    before = copy.deepcopy(ROBOT)
    bound = _pipeline().bind(ROBOT)
    assert set(bound.spaces) == {"observation", "desired_goal"}
    assert np.all(bound["observation"].low == -1.0) and np.all(bound["observation"].high == 1.0)
    assert bound["desired_goal"] == ROBOT["desired_goal"]
    assert before == ROBOT


def test_bind_checks_the_per_key_filters_against_the_selected_keys() -> None:
    pipeline = InputFilter(
        select_keys=ObservationSelectKeysFilter(["observation"]),
        observation_filters={"achieved_goal": [ObservationClippingFilter(-1.0, 1.0)]},
    )
    with pytest.raises(CoachError, match=r"\['achieved_goal'\].* has keys \['observation'\]"):
        pipeline.bind(ROBOT)


def test_bind_passes_on_a_refusal_of_the_selection() -> None:
    pipeline = InputFilter(select_keys=ObservationSelectKeysFilter(["image"]))
    with pytest.raises(CoachError, match=r"selects \['image'\]"):
        pipeline.bind(ROBOT)


def test_filter_observation_and_start_episodes_select_then_filter() -> None:
    pipeline = _pipeline()
    bound = pipeline.bind(ROBOT)
    batch = {
        "observation": np.array([[5.0, -5.0, 0.5, 0.0], [0.0, 2.0, -2.0, 1.0]], np.float32),
        "achieved_goal": np.zeros((2, 2), np.float32),
        "desired_goal": np.array([[0.5, 0.5], [-0.5, 0.25]], np.float32),
    }
    original = copy.deepcopy(batch)

    out = pipeline.filter_observation(batch)
    assert set(out) == {"observation", "desired_goal"}
    assert out["observation"].tolist() == [[1.0, -1.0, 0.5, 0.0], [0.0, 1.0, -1.0, 1.0]]
    assert out["desired_goal"] is batch["desired_goal"]
    assert all(bound.contains({k: v[i] for k, v in out.items()}) for i in range(2))

    first = pipeline.start_episodes({k: v[[1]] for k, v in batch.items()}, np.array([1]))
    assert set(first) == {"observation", "desired_goal"}
    assert first["observation"].tolist() == [[0.0, 1.0, -1.0, 1.0]]
    assert all(np.array_equal(batch[k], original[k]) for k in original) and set(batch) == set(
        original
    )


def test_selection_alone_applies_without_per_key_filters() -> None:
    pipeline = InputFilter(select_keys=ObservationSelectKeysFilter(["desired_goal"]))
    assert set(pipeline.bind(ROBOT).spaces) == {"desired_goal"}
    batch = _batch(ROBOT)
    assert list(pipeline.filter_observation(batch)) == ["desired_goal"]
    assert list(pipeline.start_episodes(batch, np.arange(3))) == ["desired_goal"]
    assert pipeline.state_dict() == {}
