"""How a run that failed is reported: the traceback in the run's log.txt, one line on the
console that says whose code failed (the user's own file and line, or Coach's: an internal
error) and where the traceback is."""

from __future__ import annotations

import contextlib
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import click

from coach.errors import CoachError

EXIT_INTERNAL = 1
"""The exit status of a run that failed (a user error, refused, exits with 2)."""


def append_to_log(directory: Path, text: str) -> Path:
    """Add ``text`` to the run's log.txt (its logger is closed by now)."""
    log = directory / "log.txt"
    with open(log, "a") as f:
        f.write(f"{time.strftime('%H:%M:%S')} {text}\n")
    return log


@dataclass(frozen=True, slots=True)
class ErrorAccount:
    """An error as the process that raised it saw it: what a run needs to report it from
    another process (a traceback does not pickle; this does)."""

    what: str
    """``ValueError: the new target went wrong``; a refused input's message alone."""
    where: str | None
    """The user's own file and line it was raised at (`user_code_line`), if any."""
    trace: str
    """The formatted traceback."""
    refused: bool
    """A `CoachError`: an input was refused, and its message says everything."""


def account(error: BaseException) -> ErrorAccount:
    """``error``, told for another process."""
    trace = "".join(traceback.format_exception(error)).rstrip()
    if isinstance(error, CoachError):
        return ErrorAccount(str(error), None, trace, refused=True)
    return ErrorAccount(_what(error), user_code_line(error), trace, refused=False)


class FailedElsewhere(Exception):
    """An error raised in another process of the run (a rollout worker), reported by the run
    as its own: the console line names the user's file and line where the other process
    found one, and log.txt keeps that process's traceback.

    Args:
        place: Which process: ``worker 2``.
        account: Its error, as it told it.
    """

    def __init__(self, place: str, account: ErrorAccount) -> None:
        super().__init__(f"{place} failed: {account.what}")
        self.place, self.account = place, account


def failed_run(error: Exception, directory: Path) -> int:
    """Report an error of Coach itself or of the user's own code (not a refused input): the
    traceback goes to the run's log.txt, the console gets one line saying whose code failed
    and pointing there."""
    trace = "".join(traceback.format_exception(error)).rstrip()
    what, where, place = _what(error), user_code_line(error), ""
    if isinstance(error, FailedElsewhere):
        trace += f"\n{error.place}'s own traceback:\n{error.account.trace}"
        what, where, place = error.account.what, error.account.where, f" ({error.place})"
    try:
        log = append_to_log(directory, f"internal error:\n{trace}")
    except OSError:  # the folder cannot take it: the console is the only place left
        click.echo(trace, err=True)
        return EXIT_INTERNAL
    if where is not None:  # the user's own agent, network or environment code failed
        line = f"coach: error in {where}{place}: {what}; the traceback is in {log}"
    else:
        line = f"coach: internal error{place}: {what}; the traceback is in {log}"
    click.echo(line, err=True)
    return EXIT_INTERNAL


def _what(error: BaseException) -> str:
    """The error's type and the first line of its message."""
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__


PYTHON_PATHS = ("stdlib", "platstdlib", "purelib", "platlib")
"""Python's own modules and the installed packages' (`sysconfig.get_paths`)."""


def user_code_line(error: BaseException) -> str | None:
    """Where in the user's own code ``error`` was raised (``/home/me/my_agent.py:42, in
    learn``), or None where it is Coach's own.

    From the innermost frame of its traceback out: frames of Python's or an installed
    package's code are passed (the user's code called them); the first frame of the user's
    own file is the answer, and one of Coach's (its package, its shipped presets) means the
    error is Coach's, whoever called Coach.
    """
    import sysconfig

    from coach.presets import presets_dir

    paths = sysconfig.get_paths()
    coach_own = [Path(__file__).resolve().parent]
    with contextlib.suppress(CoachError):  # a checkout on PYTHONPATH: no shipped presets
        coach_own.append(presets_dir().resolve())
    python = [Path(paths[key]).resolve() for key in PYTHON_PATHS]
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        if frame.filename.startswith("<"):
            continue  # frozen imports, code compiled from a string
        path = Path(frame.filename).resolve()
        if any(path.is_relative_to(own) for own in coach_own):
            return None
        if not any(path.is_relative_to(library) for library in python):
            return f"{frame.filename}:{frame.lineno}, in {frame.name}"
    return None
