"""Stored episodes for batch RL, kept as local Minari datasets.

Minari is Farama's standard format for offline RL. A run records the episodes it collects
(``coach -p PRESET --record-dataset NAME``) with `write_dataset`, and a batch preset reads them
back with `load_dataset`, checks them against its environment with
`coach.batch.checks.check_spaces` and flattens them into transitions with `transitions`.
Only local datasets are read: nothing is downloaded (``minari download ID`` fetches a remote
one into the same local root).

Datasets live under Minari's root, ``$MINARI_DATASETS_PATH`` (default ``~/.minari/datasets``),
one directory per id ``(namespace/)(env_name/)dataset_name-vN`` holding ``data/``.

How an `Episode` maps onto Minari's episode:

- observations, actions, terminations and truncations are stored as given, each in the dtype it
  was written with (images are stored losslessly, not JPEG-encoded);
- rewards are stored and loaded as float64, whatever they were given as;
- the ``behaviour`` arrays go into Minari's ``infos``. Minari keeps ``T + 1`` infos per
  episode, the reset's first, so entry ``t + 1`` of each key holds the value for action ``t``
  and entry 0 is NaN. Integer or bool behaviour values are widened to float64 to hold the NaN.
  Loading drops entry 0 again; it reads every ``infos`` array with ``T + 1`` entries this way
  (keys of nested info dicts joined with ``/``), and leaves out any other.
"""

from __future__ import annotations

import os
import shutil
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import gymnasium as gym
import minari
import numpy as np
from gymnasium import spaces
from minari.data_collector import EpisodeBuffer
from minari.dataset.minari_dataset import DATASET_ID_RE
from minari.dataset.minari_storage import MinariStorage
from minari.storage import get_dataset_path

from coach.batch.checks import check_supported, episode_misfit
from coach.batch.episodes import Dataset, Episode
from coach.batch.ids import check_new_dataset, local_dataset, unknown_id
from coach.errors import CoachError

_HDF5_FILE = "main_data.hdf5"
# Minari's advice to fill in an author's e-mail, a code permalink, an evaluation env...:
# noise for a run that records what it collected.
_MINARI_NAGS = r"(`\w+` is set to None|env_spec is None)"


@contextmanager
def _absolute_root() -> Iterator[None]:
    """Minari's root made absolute while Minari writes: given a relative
    ``$MINARI_DATASETS_PATH``, Minari joins the root to the dataset's path twice and fails to
    find the file it made."""
    root = os.environ.get("MINARI_DATASETS_PATH")
    if root is None or os.path.isabs(root):
        yield
        return
    os.environ["MINARI_DATASETS_PATH"] = os.path.abspath(root)
    try:
        yield
    finally:
        os.environ["MINARI_DATASETS_PATH"] = root


def write_dataset(
    name: str,
    episodes: Sequence[Episode],
    observation_space: spaces.Space[Any],
    action_space: spaces.Space[Any],
    env_id: str | None = None,
    *,
    algorithm_name: str | None = None,
    description: str | None = None,
    author: str | None = None,
) -> Path:
    """Write episodes as a new local Minari dataset.

    The environment is neither built nor stepped: its registered spec (looked up by
    ``env_id``) is only recorded, and no reference scores are computed.

    Args:
        name: A Minari id, ``(namespace/)(env_name/)dataset_name(-vN)``; ``-v0`` is appended
            when it has no version.
        episodes: The episodes, at least one, in the order they are to be stored.
        observation_space: The environment's raw observation space: Box, Discrete,
            MultiDiscrete, MultiBinary, or a Dict of those.
        action_space: The environment's action space: Box, Discrete, MultiDiscrete or
            MultiBinary.
        env_id: The registered gymnasium id of the environment, to record its spec.
        algorithm_name: The algorithm that acted.
        description: How the dataset was made.
        author: Who made it.

    Returns:
        The dataset's directory (the one holding ``data/``).

    Raises:
        CoachError: for an invalid or existing id, no episodes, a space Coach cannot store, an
            unregistered ``env_id``, or an episode whose arrays do not fit the spaces.
    """
    dataset_id = check_new_dataset(name)
    path = Path(get_dataset_path(dataset_id))
    if not episodes:
        raise CoachError(f"no episodes to write to dataset {dataset_id!r}")
    check_supported(observation_space, "observation", f"dataset {dataset_id!r}")
    check_supported(action_space, "action", f"dataset {dataset_id!r}")
    env_spec_json = _env_spec_json(env_id) if env_id is not None else None
    episodes = [_as_arrays(episode) for episode in episodes]
    behaviour_keys = set(episodes[0].behaviour)
    for index, episode in enumerate(episodes):
        problem = episode_misfit(episode, observation_space, action_space, behaviour_keys)
        if problem is not None:
            raise CoachError(f"cannot write dataset {dataset_id!r}: episode {index} {problem}")
    buffers = [_buffer(episode) for episode in episodes]
    try:
        with warnings.catch_warnings(), _absolute_root():
            warnings.filterwarnings("ignore", message=_MINARI_NAGS, category=UserWarning)
            written = minari.create_dataset_from_buffers(
                dataset_id,
                buffers,
                observation_space=observation_space,
                action_space=action_space,
                algorithm_name=algorithm_name,
                author=author,
                description=description,
                data_format="hdf5",
                jpeg_encoding=False,  # JPEG would change image observations
            )
        if env_spec_json is not None:
            # Passing `env=` would make Minari build the environment just to read its spaces.
            written.storage.update_metadata({"env_spec": env_spec_json})
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)  # a half-written dataset would block the id
        raise
    return path


def load_dataset(name_or_path: str | Path) -> Dataset:
    """Load a local Minari dataset by id or by path; nothing is downloaded.

    Args:
        name_or_path: A local id, with or without ``-vN`` (without, the newest local version);
            or the path of a dataset's directory (the one holding ``data/``, or ``data/``).

    Raises:
        CoachError: for an unknown id (naming the close matches and the root searched), a
            missing path, a file that cannot be read, or data that does not fit its spaces.
    """
    if isinstance(name_or_path, str) and DATASET_ID_RE.fullmatch(name_or_path):
        local = local_dataset(name_or_path)
        if local is not None:
            return _read(local / "data")
        if not Path(name_or_path).exists():  # a relative path may look like an id
            raise unknown_id(name_or_path)
    path = Path(name_or_path)
    if not path.exists():
        raise CoachError(f"no dataset at {path}: the path does not exist")
    if (path / "data").is_dir():
        return _read(path / "data")
    if (path / "metadata.json").is_file():
        return _read(path)
    raise CoachError(
        f"{path} is not a Minari dataset directory: it holds neither data/ nor metadata.json"
    )


def transitions(dataset: Dataset, observation_key: str = "observation") -> dict[str, Any]:
    """All transitions of a dataset as columns, in episode order.

    State ``t`` is observation ``t`` and next state ``t`` is observation ``t + 1``, as Coach's
    observation dicts: ``{observation_key: (N, ...)}``, or a Dict space's own keys.

    Args:
        dataset: The loaded dataset.
        observation_key: The key of a non-Dict observation (ignored for a Dict space).

    Returns:
        ``{"state", "action", "reward" (float32), "next_state", "terminated", "truncated",
        "extras" (the behaviour keys), "episode_starts"}``, each with ``N = total_steps`` rows.

    Raises:
        CoachError: if the dataset has no episodes, or episodes with different behaviour keys.
    """
    if not dataset.episodes:
        raise CoachError(f"dataset {dataset.name!r} has no episodes to make transitions from")
    keys = set(dataset.episodes[0].behaviour)
    for index, episode in enumerate(dataset.episodes):
        if set(episode.behaviour) != keys:
            raise CoachError(
                f"dataset {dataset.name!r}: episode {index} logs behaviour "
                f"{sorted(episode.behaviour)} but episode 0 logs {sorted(keys)}"
            )

    def observations(episode: Episode, rows: slice) -> dict[str, np.ndarray]:
        if isinstance(episode.observations, dict):
            return {k: v[rows] for k, v in episode.observations.items()}
        return {observation_key: episode.observations[rows]}

    def column(parts: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(parts)

    def columns(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
        return {k: column([p[k] for p in parts]) for k in parts[0]}

    episodes = dataset.episodes
    starts = np.zeros(dataset.total_steps, dtype=bool)
    starts[np.cumsum([0] + [e.num_steps for e in episodes[:-1]])] = True
    return {
        "state": columns([observations(e, slice(None, -1)) for e in episodes]),
        "action": column([e.actions for e in episodes]),
        "reward": column([e.rewards for e in episodes]).astype(np.float32),
        "next_state": columns([observations(e, slice(1, None)) for e in episodes]),
        "terminated": column([e.terminations for e in episodes]).astype(bool),
        "truncated": column([e.truncations for e in episodes]).astype(bool),
        "extras": {k: column([e.behaviour[k] for e in episodes]) for k in sorted(keys)},
        "episode_starts": starts,
    }


def _env_spec_json(env_id: str) -> str:
    """The registered spec of ``env_id`` as Minari stores it (no environment is built)."""
    try:
        spec = gym.spec(env_id)
    except (gym.error.Error, ImportError) as error:
        raise CoachError(
            f"env_id {env_id!r} is not a registered gymnasium environment ({error}); "
            "pass a registered id, or env_id=None to leave it out"
        ) from error
    try:
        return spec.to_json()
    except TypeError as error:
        raise CoachError(
            f"the spec of env_id {env_id!r} cannot be stored as JSON ({error}); "
            "pass env_id=None to leave it out"
        ) from error


def _as_arrays(episode: Episode) -> Episode:
    observations = episode.observations
    return Episode(
        observations=(
            {k: np.asarray(v) for k, v in observations.items()}
            if isinstance(observations, dict)
            else np.asarray(observations)
        ),
        actions=np.asarray(episode.actions),
        rewards=np.asarray(episode.rewards),
        terminations=np.asarray(episode.terminations),
        truncations=np.asarray(episode.truncations),
        behaviour={k: np.asarray(v) for k, v in episode.behaviour.items()},
    )


def _buffer(episode: Episode) -> EpisodeBuffer:
    infos = None
    if episode.behaviour:
        infos = {}
        for key, value in episode.behaviour.items():
            dtype = value.dtype if value.dtype.kind == "f" else np.dtype(np.float64)
            first = np.full((1, *value.shape[1:]), np.nan, dtype=dtype)  # the reset's info
            infos[key] = np.concatenate([first, value.astype(dtype)])
    return EpisodeBuffer(
        observations=episode.observations,
        actions=episode.actions,
        rewards=episode.rewards.astype(np.float64),
        terminations=episode.terminations.astype(bool),
        truncations=episode.truncations.astype(bool),
        infos=infos,
    )


def _read(data_path: Path) -> Dataset:
    """Read the dataset stored in ``data_path`` (a dataset's ``data/``)."""
    metadata_file = data_path / "metadata.json"
    try:
        data_format = MinariStorage.read_raw_metadata(data_path).get("data_format")
    except Exception as error:  # json and Minari raise many types for a damaged file
        raise CoachError(
            f"cannot read dataset metadata {metadata_file}: {type(error).__name__}: {error}"
        ) from error
    data_file = data_path / _HDF5_FILE if data_format == "hdf5" else data_path
    try:
        source = minari.MinariDataset(data_path)
        raw = list(source.iterate_episodes())
        metadata = source.storage.metadata
    except Exception as error:  # h5py, Minari's asserts...: all mean the file is unreadable
        raise CoachError(
            f"cannot read dataset file {data_file}: it is unreadable or corrupted "
            f"({type(error).__name__}: {error})"
        ) from error
    name = str(metadata.get("dataset_id", data_path.parent.name))
    where = f"dataset {name!r} at {data_path.parent}"
    check_supported(source.observation_space, "observation", where)
    check_supported(source.action_space, "action", where)
    episodes = [_episode(data, source.observation_space) for data in raw]
    keys = set(episodes[0].behaviour) if episodes else set()
    for index, episode in enumerate(episodes):
        problem = episode_misfit(episode, source.observation_space, source.action_space, keys)
        if problem is not None:
            raise CoachError(f"{where} does not fit its own spaces: episode {index} {problem}")
    env_spec = source.env_spec
    return Dataset(
        name=name,
        path=data_path.parent,
        episodes=episodes,
        observation_space=source.observation_space,
        action_space=source.action_space,
        env_id=env_spec.id if env_spec is not None else None,
        metadata=metadata,
    )


def _episode(data: minari.EpisodeData, observation_space: spaces.Space[Any]) -> Episode:
    observations = data.observations
    if isinstance(observations, dict):
        space_keys = observation_space.spaces if isinstance(observation_space, spaces.Dict) else {}
        order = [k for k in space_keys if k in observations]  # the space's order first
        order += [k for k in observations if k not in order]
        observations = {k: np.asarray(observations[k]) for k in order}
    else:
        observations = np.asarray(observations)
    steps = len(data.rewards)
    behaviour = {
        key: value[1:]  # entry 0 is the reset's info
        for key, value in _flatten(data.infos or {}).items()
        if value.ndim >= 1 and len(value) == steps + 1
    }
    return Episode(
        observations=observations,
        actions=np.asarray(data.actions),
        rewards=np.asarray(data.rewards, dtype=np.float64),
        terminations=np.asarray(data.terminations, dtype=bool),
        truncations=np.asarray(data.truncations, dtype=bool),
        behaviour=behaviour,
    )


def _flatten(infos: dict[str, Any], prefix: str = "") -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for key, value in infos.items():
        if isinstance(value, dict):
            out.update(_flatten(value, f"{prefix}{key}/"))
        else:
            out[f"{prefix}{key}"] = np.asarray(value)
    return out
