"""Checkpoints: what a run needs to carry on exactly, written atomically, read safely.

A checkpoint is one ``torch.save`` file, ``checkpoints/checkpoint_<env steps>.pt``, holding
the graph manager's `state_dict`: every network and optimizer, filter statistics,
exploration and schedule state, the counters, the random generators, the state of the
episodes in flight where the environment allows it, the log offsets and, on request, the
replay memories. Numpy arrays are stored as tensors, so the file loads with
``torch.load(weights_only=True)``: nothing but tensors and plain Python values is
unpickled from disk.

Writes are atomic: the file is written under a temporary name, synced, renamed, and only
then does the ``latest`` marker (itself replaced atomically) name it. A run killed at any
moment leaves the previous checkpoint intact and named by ``latest``; a write the disk
refuses (full, or past a file-size limit) removes its temporary file and ends the run with a
`coach.experiment.WriteFailed` that says so (`coach.experiment.write_atomically`).

Beside them, ``checkpoints/best.pt`` holds the run as it was at its best evaluation so far
(the highest mean reward), for ``-crd .../checkpoints/best.pt``.
"""

from __future__ import annotations

import pickle
import re
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

from coach.errors import CoachError
from coach.experiment import write_atomically

FORMAT = 1
"""Version of the checkpoint layout."""
LATEST = "latest"
"""The marker file naming the newest complete checkpoint."""
BEST = "best.pt"
"""The checkpoint of the run's best evaluation so far (its highest mean reward)."""
_NDARRAY = "__ndarray__"


def pack(value: Any) -> Any:
    """Make ``value`` loadable with ``weights_only=True``: numpy arrays become tensors.

    For a state saved at once: a writable C-contiguous array is shared, not copied (a full
    Atari replay's frames are about 7 GB), so it must not change before the save ends.
    """
    if isinstance(value, np.ndarray):
        if value.flags.writeable and value.flags.c_contiguous:
            return {_NDARRAY: torch.from_numpy(value)}
        return {_NDARRAY: torch.from_numpy(np.array(value, copy=True))}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {k: pack(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(pack(v) for v in value)
    return value


def unpack(value: Any) -> Any:
    """Undo `pack`."""
    if isinstance(value, dict):
        if set(value) == {_NDARRAY}:
            return value[_NDARRAY].numpy()
        return {k: unpack(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(unpack(v) for v in value)
    return value


def _save(state: dict[str, Any], final: Path, intact: str) -> None:
    """``torch.save`` of ``state`` (packed, with the format) as ``final``, atomically."""
    document = {"format": FORMAT, "saved_at": time.time(), **pack(state)}
    write_atomically(final, lambda f: torch.save(document, f), intact)


def _intact(directory: Path) -> str:
    """What is left of the run when a checkpoint cannot be written: its latest complete
    checkpoint, and how to go on from it."""
    marker = directory / LATEST
    if not marker.is_file():
        return "the run has no earlier checkpoint"
    latest = directory / marker.read_text().strip()
    resume = f"coach --resume {directory.parent}"
    return f"its latest checkpoint, {latest}, is intact ({resume} goes on from it)"


def save_checkpoint(directory: Path, state: dict[str, Any], env_steps: int, keep: int = 5) -> Path:
    """Write ``state`` as ``checkpoint_<env_steps>.pt`` in ``directory``, then mark it latest.

    Keeps the newest ``keep`` checkpoints and deletes the older ones.

    Raises:
        WriteFailed: the disk refused the file (full, or past a file-size limit); the
            checkpoint marked latest before is intact, and no temporary file is left.
    """
    directory.mkdir(parents=True, exist_ok=True)
    final = directory / f"checkpoint_{env_steps}.pt"
    intact = _intact(directory)
    _save(state, final, intact)
    # Until the marker names it, the new file is not the run's checkpoint.
    write_atomically(directory / LATEST, lambda f: f.write(f"{final.name}\n".encode()), intact)
    checkpoints = sorted(directory.glob("checkpoint_*.pt"), key=_steps_of)
    for old in checkpoints[:-keep] if keep > 0 else []:
        old.unlink(missing_ok=True)
    return final


def save_best(directory: Path, state: dict[str, Any]) -> Path:
    """Write ``state`` as ``best.pt`` in ``directory``, atomically, replacing the last best.

    It is outside the ``latest`` marker and the rotation of `save_checkpoint`: a resumed run
    goes on from its latest checkpoint, and the best one stays until a better one comes.

    Raises:
        WriteFailed: the disk refused the file; the best.pt before it is intact.
    """
    directory.mkdir(parents=True, exist_ok=True)
    final = directory / BEST
    before = "the best.pt before it is intact" if final.is_file() else "there was no best.pt"
    _save(state, final, f"{before}, and {_intact(directory)}")
    return final


def _steps_of(path: Path) -> int:
    try:
        return int(path.stem.removeprefix("checkpoint_"))
    except ValueError:
        return -1


def find_checkpoint(path: Path) -> Path:
    """The checkpoint file that ``path`` stands for.

    ``path`` may be a checkpoint file, a checkpoints folder, a run's folder (whose
    ``checkpoints/`` is used) or an experiment name's folder (``experiments/NAME``, whose
    newest run with a checkpoint is used: the runs' timestamped names sort by time); in a
    folder, the checkpoint its ``latest`` marker names.

    Raises:
        CoachError: when there is no such folder, or no complete checkpoint in it.
    """
    if path.is_file():
        return path
    if not path.is_dir():
        raise CoachError(f"no checkpoint folder {path}")
    folder = path / "checkpoints" if (path / "checkpoints").is_dir() else path
    if not (folder / LATEST).is_file():
        runs = sorted(p for p in path.iterdir() if (p / "checkpoints" / LATEST).is_file())
        if runs:
            folder = runs[-1] / "checkpoints"
    marker = folder / LATEST
    if not marker.is_file():
        raise CoachError(f"no checkpoint in {folder} (no '{LATEST}' marker)")
    checkpoint = folder / marker.read_text().strip()
    if not checkpoint.is_file():
        raise CoachError(f"{marker} names {checkpoint.name}, which is missing")
    return checkpoint


def load_checkpoint(path: Path) -> dict[str, Any]:
    """Read a checkpoint (a file or a folder, see `find_checkpoint`).

    Raises:
        CoachError: naming the file, when it is missing, truncated or not a Coach checkpoint.
    """
    checkpoint = find_checkpoint(path)
    try:
        # Mapped, not read: the tensors are the file's pages until they are copied where they
        # belong, so restoring a 7 GB Atari replay takes 7 GB of memory and not 14. A file
        # that is no zip archive (truncated, or no checkpoint) is read, for torch's own error.
        mapped = zipfile.is_zipfile(checkpoint)
        loaded = torch.load(checkpoint, map_location="cpu", weights_only=True, mmap=mapped)
    except Exception as error:
        raise _unreadable(checkpoint, error) from None
    if not isinstance(loaded, dict) or loaded.get("format") != FORMAT:
        raise CoachError(f"{checkpoint} is not a Coach checkpoint (format {FORMAT})")
    state: dict[str, Any] = unpack(loaded)
    state["path"] = str(checkpoint)
    return state


_GLOBAL = re.compile(r"GLOBAL ([\w.]+)")
"""How torch names, in its refusal, a class or function that a file would unpickle."""


def _unreadable(checkpoint: Path, error: Exception) -> CoachError:
    """Why ``checkpoint`` did not load, for a user: never torch's advice on loading it
    anyway (``weights_only=False``), which is for a file one trusts, and no file given to
    Coach is trusted so."""
    text = str(error)
    if isinstance(error, pickle.UnpicklingError) and "Weights only load failed" in text:
        names = sorted(set(_GLOBAL.findall(text)))
        if names:  # a class or function to unpickle: made by something else than Coach
            return CoachError(
                f"{checkpoint} holds pickled objects ({', '.join(names)}) that a Coach "
                f"checkpoint never holds: Coach will not load it, since unpickling them could "
                f"run any code"
            )
        # What the weights-only unpickler met, without the advice around it.
        after = text.partition("WeightsUnpickler error:")[2].splitlines()
        detail = next((line.strip() for line in after if line.strip()), "")
        return CoachError(
            f"checkpoint {checkpoint} is corrupted or unreadable: it is no pickle of tensors "
            f"and plain values" + (f" ({detail})" if detail else "")
        )
    # torch's first line says what failed (a truncated file, no zip archive).
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    reason = lines[0] if lines else type(error).__name__
    return CoachError(f"checkpoint {checkpoint} is corrupted or unreadable: {reason}")


class CheckpointSchedule:
    """When checkpoints are due: every ``seconds`` and/or every ``env_steps``.

    Args:
        seconds: Wall-clock seconds between checkpoints, or ``None``.
        env_steps: Env steps between checkpoints, or ``None``.
        start_steps: The run's env steps when the schedule starts (a resumed run's).
    """

    def __init__(self, seconds: float | None, env_steps: int | None, start_steps: int = 0) -> None:
        self.seconds = seconds
        self.env_steps = env_steps
        self._next_time = time.monotonic() + seconds if seconds else float("inf")
        self._next_steps = (start_steps // env_steps + 1) * env_steps if env_steps else float("inf")

    @property
    def enabled(self) -> bool:
        return bool(self.seconds or self.env_steps)

    def due(self, env_steps: int) -> bool:
        return env_steps >= self._next_steps or (
            self._next_time != float("inf") and time.monotonic() >= self._next_time
        )

    def saved(self, env_steps: int) -> None:
        """Start counting towards the next checkpoint."""
        if self.seconds:
            self._next_time = time.monotonic() + self.seconds
        if self.env_steps:
            self._next_steps = (env_steps // self.env_steps + 1) * self.env_steps
