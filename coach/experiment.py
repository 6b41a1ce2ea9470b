"""The experiment folder on disk: a new folder per run, and the ``params.yaml`` it starts with
(see DESIGN.md, "An experiment on disk")."""

from __future__ import annotations

import datetime as dt
import errno
import os
import platform
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import yaml

from coach.errors import CoachError


@dataclass(slots=True)
class ExperimentFolder:
    """A run's new folder, and the folders made to hold it."""

    path: Path
    """``root/name/<timestamp>``."""
    created: list[Path]
    """The folders that did not exist before, the outermost first (``path`` last)."""

    def remove(self) -> None:
        """Remove the folder, and those made for it that are still empty: a run that could
        not start leaves nothing behind."""
        shutil.rmtree(self.path, ignore_errors=True)
        for folder in reversed(self.created[:-1]):
            try:
                folder.rmdir()
            except OSError:  # another run wrote into it meanwhile
                return


def experiment_dir(root: Path, name: str) -> ExperimentFolder:
    """A new, empty experiment folder: ``root/name/<timestamp>``.

    Raises:
        CoachError: when the folder cannot be made there.
    """
    stamp = dt.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
    try:
        created = [p for p in (root, root / name) if not p.is_dir()]
        path = root / name / stamp
        suffix = 1
        while path.exists():
            suffix += 1
            path = root / name / f"{stamp}_{suffix}"
        path.mkdir(parents=True)
    except OSError as error:
        raise CoachError(f"cannot write to the experiment path {root}: {error.strerror}") from None
    return ExperimentFolder(path, [*created, path])


def versions() -> dict[str, str]:
    """The versions a run's numbers depend on."""
    import gymnasium
    import numpy
    import torch

    import coach

    return {
        "coach": coach.__version__,
        "python": platform.python_version(),
        "torch": str(torch.__version__),
        "gymnasium": gymnasium.__version__,
        "numpy": numpy.__version__,
    }


WRITE_FAILURES = {
    errno.EFBIG: "the file grew past this process's file-size limit (ulimit -f)",
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exceeded",
}
"""What a refused write tells a user, by its errno (others: the system's own text)."""


class WriteFailed(CoachError):
    """The file system refused a file of the run (a full disk, a file-size limit): what was
    there before is intact."""


def write_atomically(final: Path, write: Callable[[IO[bytes]], object], intact: str) -> None:
    """Write ``final`` whole or not at all: ``write`` fills a temporary file beside it, which
    is synced and renamed over ``final``. On any failure the temporary file is removed, so a
    run stopped at any moment, or refused by its disk, leaves ``final`` as it was.

    Args:
        final: The file to write.
        write: Writes the contents to the file object it is given.
        intact: What the message of a refused write says is left as it was (the previous
            checkpoint, and how to go on from it).

    Raises:
        WriteFailed: the file system refused the write, naming ``final``, why and ``intact``.
    """
    tmp = final.with_name(f".{final.name}.tmp")
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, final)
    except BaseException as error:
        tmp.unlink(missing_ok=True)
        refused = _os_error(error) if isinstance(error, Exception) else None
        if refused is None:  # not the disk's doing (a signal, an error of its own): as it is
            raise
        why = WRITE_FAILURES.get(refused.errno or 0) or refused.strerror or str(refused)
        raise WriteFailed(f"could not write {final}: {why}; {intact}") from error


def _os_error(error: BaseException) -> OSError | None:
    """The `OSError` behind ``error``, if any: torch reports a refused write as a
    `RuntimeError` (``unexpected pos``) raised while handling the file object's `OSError`."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, OSError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def write_params(
    path: Path, preset: Any, seed: int, overrides: list[str], changed_on_resume: str | None = None
) -> None:
    """Write ``params.yaml``: the resolved parameters, itself a YAML preset of the run.

    ``changed_on_resume`` says which parameters a resume changed from what the run had
    trained with (as ``-cp`` asked), for the record in the file's header."""
    from coach.agents.parameters import agent_classes
    from coach.parameter_tree import flatten

    roots = preset.graph_manager.parameters()
    settable, fixed = flatten(roots)
    # The spec builds the preset again from any folder (a user's file by its absolute path);
    # the name is what the run went by (its checkpoints and curves), where the two differ.
    spec = preset.spec or preset.name
    named = {"name": preset.name} if spec != preset.name else {}
    document = {
        "preset": spec,
        **named,
        "seed": seed,
        "parameters": settable,
        "fixed": fixed,
        "agent_classes": agent_classes(roots),  # a record: the preset builds them
        "versions": versions(),
    }
    header = (
        f"# Resolved parameters of a run of {preset.name} ({preset.source}).\n"
        f"# Repeat the run with: coach -p {path}\n"
        f"# Overrides given on the command line: {overrides or 'none'}\n"
    )
    if changed_on_resume is not None:
        header += (
            f"# Resumed with changed parameters (the numbers differ from an uninterrupted "
            f"run's): {changed_on_resume}\n"
        )
    path.write_text(header + yaml.safe_dump(document, sort_keys=False, width=100))
