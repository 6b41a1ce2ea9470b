"""The errors that end a run: one a user can cause (the CLI prints its message in a line or
two and exits 2), and the stop a signal asks for (the run checkpoints and ends)."""

from __future__ import annotations


class CoachError(Exception):
    """A mistake in what the user asked for (a preset name, an override, a space, a file).

    The message says what was wrong and what would be right; no traceback is shown for it.
    """


class RunInterrupted(Exception):
    """A signal asked the run to stop; raised between two steps."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by signal {signum}")
        self.signum = signum
