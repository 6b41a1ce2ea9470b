"""The experiment folder on disk: a new folder per run, and the ``params.yaml`` it starts with
(see DESIGN.md, "An experiment on disk")."""

from __future__ import annotations

import datetime as dt
import platform
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def write_params(
    path: Path, preset: Any, seed: int, overrides: list[str], changed_on_resume: str | None = None
) -> None:
    """Write ``params.yaml``: the resolved parameters, itself a YAML preset of the run.

    ``changed_on_resume`` says which parameters a resume changed from what the run had
    trained with (as ``-cp`` asked), for the record in the file's header."""
    from coach.parameters import flatten

    settable, fixed = flatten(preset.graph_manager.parameters())
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
