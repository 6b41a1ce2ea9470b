"""The error a user can cause: the CLI prints its message in a line or two and exits 2."""

from __future__ import annotations


class CoachError(Exception):
    """A mistake in what the user asked for (a preset name, an override, a space, a file).

    The message says what was wrong and what would be right; no traceback is shown for it.
    """
