"""What ``coach --resume`` checks and carries over from the run it resumes: the torch device
and threads the run had (its numbers depend on them), and its parameters, which must be
those its checkpoint trained with unless the command line asks for a change
(`coach.graph_managers.run_state.parameter_changes`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from coach.errors import CoachError
from coach.graph_managers.run_state import describe_changes, parameter_changes, unasked_changes
from coach.parameters import parse_override


def device_and_threads(
    device: str | None, threads: int | None, resumed: dict[str, Any] | None
) -> tuple[str, int]:
    """The torch device and CPU threads of a run: those given (``--device``, ``--threads``),
    else those the resumed run had (its numbers depend on them), else cpu and 1.

    Raises:
        CoachError: the resumed run's device is not on this machine, and none was given.
    """
    from coach.cli_options import available_devices

    saved = resumed or {}
    chosen = device or saved.get("device") or "cpu"
    if device is None and chosen not in available_devices():
        raise CoachError(f"this run trained on {chosen}, which this machine lacks: give --device")
    return chosen, threads or saved.get("threads") or 1


def check_unchanged(
    checkpoint: dict[str, Any], roots: dict[str, Any], run: Path | None, overrides: tuple[str, ...]
) -> None:
    """Refuse to resume the run in ``run`` whose parameters (``roots``) are no longer what its
    checkpoint trained with (its params.yaml edited), unless an override of the command line
    (``overrides``, ``-cp``) asks for each change.

    Raises:
        CoachError: naming the changed fields and how to ask for them.
    """
    asked = tuple(parse_override(text)[0] for text in overrides)
    unasked = unasked_changes(parameter_changes(checkpoint, roots), asked)
    if unasked:
        first = next(iter(unasked))
        raise CoachError(
            f"{run}/params.yaml is not what {checkpoint['path']} trained with: "
            f"{describe_changes(unasked)}; resume with the parameters it trained with, or ask "
            f"for the change with -cp {first}=VALUE on --resume"
        )


def changes_asked_for(resumed: dict[str, Any] | None, parameters: dict[str, Any]) -> str | None:
    """The parameter changes a resume makes (the command line asked for each: `check_unchanged`
    refused any other), in words for the log and params.yaml; ``None`` for none, or for a
    run that is not resumed."""
    changes = parameter_changes(resumed, parameters) if resumed is not None else {}
    return describe_changes(changes, most=len(changes)) if changes else None
