"""What a dataset must be for Coach: spaces it can use, episodes that fit them, and a dataset
in its environment's spaces.

`coach.batch.datasets` refuses unusable spaces and misfit episodes with `check_supported` and
`episode_misfit` (when writing and when reading); a batch run refuses a dataset recorded in
other spaces than its environment's with `check_spaces`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from coach.batch.episodes import Dataset, Episode
from coach.errors import CoachError

_ARRAY_SPACES = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)
_DTYPE_KINDS: tuple[tuple[type[spaces.Space[Any]], str], ...] = (
    (spaces.Box, "biuf"),
    (spaces.Discrete, "iu"),
    (spaces.MultiDiscrete, "iu"),
    (spaces.MultiBinary, "biu"),
)
"""The numpy dtype kinds (bool, int, uint, float) whose arrays each space's values fit in."""


def check_spaces(
    dataset: Dataset, observation_space: spaces.Space[Any], action_space: spaces.Space[Any]
) -> None:
    """Refuse a dataset recorded in other spaces than the environment's.

    Spaces match as gymnasium compares them, except that Box bounds match when equal up to a
    float32 rounding (and no looser than that), Discrete spaces compare ``n`` and ``start``
    only (Minari does not keep their dtype), and Dict keys compare in any order.

    Raises:
        CoachError: naming the dataset's space and the environment's for each that differs.
    """
    problems = [
        f"{role} {ours} but the environment's are {theirs}"
        for role, ours, theirs in (
            ("observations", dataset.observation_space, observation_space),
            ("actions", dataset.action_space, action_space),
        )
        if not _same_space(ours, theirs)
    ]
    if problems:
        raise CoachError(f"dataset {dataset.name!r} has " + "; and ".join(problems))


def check_supported(space: spaces.Space[Any], role: str, where: str) -> None:
    """Refuse a space whose values are not arrays (a Dict of them for observations)."""
    if isinstance(space, _ARRAY_SPACES):
        return
    if (
        role == "observation"
        and isinstance(space, spaces.Dict)
        and all(isinstance(s, _ARRAY_SPACES) for s in space.spaces.values())
    ):
        return
    kinds = "Box, Discrete, MultiDiscrete, MultiBinary" + (
        ", or a Dict of them" if role == "observation" else ""
    )
    raise CoachError(f"{where}: Coach cannot use the {role} space {space}; it takes {kinds}")


def episode_misfit(
    episode: Episode,
    observation_space: spaces.Space[Any],
    action_space: spaces.Space[Any],
    behaviour_keys: set[str],
) -> str | None:
    """What in an episode does not fit the spaces (``None`` when it all fits)."""
    if episode.rewards.ndim != 1 or len(episode.rewards) == 0:
        return f"has rewards of shape {episode.rewards.shape}; expected (T,) with T >= 1 steps"
    steps = len(episode.rewards)
    fields: list[tuple[str, np.ndarray, spaces.Space[Any] | None, int]] = [
        ("actions", episode.actions, action_space, steps),
        ("terminations", episode.terminations, None, steps),
        ("truncations", episode.truncations, None, steps),
    ]
    observations = episode.observations
    if isinstance(observation_space, spaces.Dict):
        if not isinstance(observations, dict) or set(observations) != set(observation_space):
            got = sorted(observations) if isinstance(observations, dict) else "an array"
            return (
                f"({steps} steps) has observations {got} but the space {observation_space} "
                f"has keys {sorted(observation_space)}"
            )
        for key, subspace in observation_space.spaces.items():
            fields.append((f"observations[{key!r}]", observations[key], subspace, steps + 1))
    elif isinstance(observations, dict):
        return f"({steps} steps) has dict observations but the space is {observation_space}"
    else:
        fields.append(("observations", observations, observation_space, steps + 1))
    for name, array, space, length in fields:
        shape = (length, *(space.shape if space is not None and space.shape else ()))
        if array.shape != shape:
            where = f" for {space}" if space is not None else ""
            return f"({steps} steps) has {name} of shape {array.shape}; expected {shape}{where}"
        kinds = next((k for t, k in _DTYPE_KINDS if isinstance(space, t)), "b")
        if array.dtype.kind not in kinds:
            what = f"values of {space}" if space is not None else "flags (bool)"
            return f"({steps} steps) has {name} of dtype {array.dtype}, which cannot be {what}"
    if set(episode.behaviour) != behaviour_keys:
        return (
            f"logs behaviour {sorted(episode.behaviour)} but episode 0 logs "
            f"{sorted(behaviour_keys)}; every episode must log the same keys"
        )
    for key, value in episode.behaviour.items():
        if value.ndim == 0 or len(value) != steps or value.dtype.kind not in "biuf":
            return (
                f"({steps} steps) has behaviour[{key!r}] of shape {value.shape} and dtype "
                f"{value.dtype}; expected ({steps}, ...) numbers, one row per action"
            )
    return None


def _same_space(ours: spaces.Space[Any], theirs: spaces.Space[Any]) -> bool:
    if isinstance(ours, spaces.Box) and isinstance(theirs, spaces.Box):
        return (
            ours.shape == theirs.shape
            and ours.dtype == theirs.dtype
            and _same_bounds(ours.low, theirs.low, ours.dtype)
            and _same_bounds(ours.high, theirs.high, ours.dtype)
        )
    if isinstance(ours, spaces.Discrete) and isinstance(theirs, spaces.Discrete):
        return int(ours.n) == int(theirs.n) and int(ours.start) == int(theirs.start)
    if isinstance(ours, spaces.Dict) and isinstance(theirs, spaces.Dict):
        return set(ours.spaces) == set(theirs.spaces) and all(
            _same_space(s, theirs.spaces[k]) for k, s in ours.spaces.items()
        )
    return bool(ours == theirs)


def _same_bounds(ours: np.ndarray, theirs: np.ndarray, dtype: np.dtype[Any]) -> bool:
    """Equal bounds, or bounds that differ by one float32 (or the dtype's) rounding."""
    if dtype.kind != "f":
        return bool(np.array_equal(ours, theirs))
    rounding = max(float(np.finfo(dtype).eps), float(np.finfo(np.float32).eps))
    return bool(np.allclose(ours, theirs, rtol=rounding, atol=0.0))  # equal infinities match
