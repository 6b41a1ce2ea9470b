"""Minari dataset ids: the id a new dataset is written under, the local dataset an id names,
and what to say of an id that names none.

Ids are ``(namespace/)(env_name/)dataset_name-vN``; datasets live under Minari's root,
``$MINARI_DATASETS_PATH`` (default ``~/.minari/datasets``), one directory per id.
"""

from __future__ import annotations

import difflib
import re
import warnings
from pathlib import Path

import minari
from minari.dataset.minari_dataset import DATASET_ID_RE
from minari.storage import get_dataset_path

from coach.errors import CoachError


def check_new_dataset(name: str) -> str:
    """The versioned id a new dataset ``name`` is written under; refused (CoachError) if it
    is not a valid id or a dataset has it already. A run checks before it starts."""
    dataset_id = _versioned_id(name)
    path = Path(get_dataset_path()) / dataset_id
    if path.exists():
        raise CoachError(
            f"a dataset {dataset_id!r} already exists at {path}; "
            "choose another name or version, or delete it first"
        )
    return dataset_id


def _versioned_id(name: str) -> str:
    """``name`` with ``-v0`` appended when it has no version; refused unless a valid id."""
    match = DATASET_ID_RE.fullmatch(name)
    if match is None:
        raise CoachError(
            f"{name!r} is not a Minari dataset id: ids are (namespace/)(env_name/)dataset_name"
            "(-vN) made of letters, digits, '-' and '_', e.g. 'cartpole/random-v0'"
        )
    return name if match.group("version") is not None else f"{name}-v0"


def local_dataset(name: str) -> Path | None:
    """The directory of a local dataset id (the newest version when it has none)."""
    match = DATASET_ID_RE.fullmatch(name)
    assert match is not None
    root = get_dataset_path()
    if match.group("version") is not None:
        path = root / name
        return path if (path / "data").is_dir() else None
    namespace, dataset_name = match.group("namespace", "dataset")
    parent = root / namespace if namespace else root
    pattern = re.compile(rf"{re.escape(dataset_name)}-v(\d+)")
    versions = {}
    if parent.is_dir():
        for child in parent.iterdir():
            version = pattern.fullmatch(child.name)
            if version is not None and (child / "data").is_dir():
                versions[int(version.group(1))] = child
    return versions[max(versions)] if versions else None


def unknown_id(name: str) -> CoachError:
    """The error for an id no local dataset has: the close local ids, or how to list them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Minari warns about each misconfigured dataset
        ids = list(minari.list_local_datasets())
    match = DATASET_ID_RE.fullmatch(name)
    if match is not None and match.group("version") is None:
        ids = sorted({re.sub(r"-v\d+$", "", i) for i in ids})
    close = difflib.get_close_matches(name, ids, 3, 0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else "; `minari list local` lists them"
    return CoachError(
        f"no local Minari dataset {name!r} under {get_dataset_path()}{hint} "
        "(Coach does not download datasets: `minari download ID` fetches a remote one)"
    )
