"""The errors that end a run: one a user can cause (the CLI prints its message in a line or
two and exits 2), and the stop a signal asks for (the run checkpoints and ends), with the
signals that ask for it."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator
from typing import Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""Ctrl-C, and what a scheduler or ``kill`` sends: each asks a run to stop with a checkpoint."""


@contextlib.contextmanager
def on_stop_signals(handler: Callable[[int, Any], None]) -> Iterator[None]:
    """Within: `STOP_SIGNALS` call ``handler(signum, frame)``; after, the handlers before are
    back (main thread only, as for any signal handler)."""
    before = {number: signal.signal(number, handler) for number in STOP_SIGNALS}
    try:
        yield
    finally:
        for number, previous in before.items():
            signal.signal(number, previous)


class CoachError(Exception):
    """A mistake in what the user asked for (a preset name, an override, a space, a file).

    The message says what was wrong and what would be right; no traceback is shown for it.
    """


class RunInterrupted(Exception):
    """A signal asked the run to stop; raised between two steps."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by signal {signum}")
        self.signum = signum
