"""Live progress bars on a terminal, drawn by tqdm, and log lines printed above them.

A `ProgressBar` is a tqdm bar, ``train  42% |████▏     | 21k/50k env steps  1.02k/s  00:21
elapsed  00:29 left, reward 23.0``, redrawn in place (a carriage return) at most ten times
a second; tqdm fits it to the terminal's width (the postfix giving way first) and measures
the rate (a moving average) and the time left. It draws only where its stream is a terminal
(``isatty()``): on a pipe or a file it writes nothing, so logs and CI output keep only their
log lines.

Bars share the terminal's last line through a `ProgressLine`: bars opened on one line
stack, the newest is drawn and the ones beneath wait (a run's evaluation bar over its
training bar) until it closes. A log line goes above the bars: the bar is cleared before it
and redrawn after it; `ConsoleHandler` does this for each record of a `logging` logger.

One line for many things at once (the seeds of a group, the trials of a study) is one bar
whose ``done`` is their sum and whose postfix says how each goes; `group_postfix` writes
that postfix::

    bar = ProgressBar("seeds", total=5 * 50_000, unit="env steps")
    while runs_go_on():
        steps = {name: env_steps_of(name) for name in running}  # e.g. {"seed_0": 12_300}
        bar.update(finished * 50_000 + sum(steps.values()),
                   group_postfix("seeds", finished, 5, {n: (s, 50_000) for n, s in steps.items()}))
    bar.close()

which draws ``seeds  31% |███  | 77.3k/250k env steps ..., seeds 1/5 done · seed_1 12.3k/50k
· seed_2 15k/50k``.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from tqdm import tqdm
from tqdm.utils import disp_len, disp_trim

BAR_FORMAT = (
    "{desc} {percentage:3.0f}% |{bar}| {count}  {rate_noinv_fmt}  {elapsed} elapsed  "
    "{remaining} left{postfix}"
)
"""tqdm's ``bar_format`` for every bar (``count`` is the bar's own: `_LineBar`)."""
MIN_BAR = 10
"""The columns of bar the postfix gives way to: where the line is short of room, the
postfix is cut, or goes, first (on an 80-column terminal a training bar's goes). Only the
rest of the line shrinks the bar further."""
SMOOTHING = 0.05
"""tqdm's ``smoothing``: the rate shown is a moving average of the rates between frames,
each frame's weighing this much (about the last twenty frames, two seconds)."""
_ASCII = str.maketrans({"…": "~", "·": "-"})
"""What a terminal without Unicode gets instead."""


def format_count(value: float) -> str:
    """A count in three significant digits: ``950``, ``12.3k``, ``1.5M``, ``0.25``."""
    magnitude = abs(value)
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if magnitude >= scale * 0.9995:
            return f"{value / scale:.3g}{suffix}"
    if value == int(value):
        return str(int(value))
    return f"{value:.3g}"


def group_postfix(
    name: str, finished: int, total: int, running: Mapping[str, tuple[float, float]]
) -> str:
    """The postfix of one bar for a group: ``seeds 2/5 done · seed_2 12.3k/50k · ...``.

    Args:
        name: What the group's members are (``seeds``, ``trials``).
        finished: Members done.
        total: Members in all.
        running: Each running member's progress, ``(done, total)``, by its name.
    """
    parts = [f"{name} {finished}/{total} done"]
    parts += [f"{k} {format_count(d)}/{format_count(t)}" for k, (d, t) in running.items()]
    return " · ".join(parts)


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is an interactive terminal that redraws a line in place (not a
    pipe, a file, or a ``TERM=dumb`` terminal)."""
    try:
        return bool(stream.isatty()) and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class ProgressLine:
    """The last line of a terminal, shared by live bars and the log lines printed above.

    Args:
        stream: The terminal (default ``sys.stdout``).
        enabled: Draw at all (a quiet run passes false); nothing is drawn on a stream that
            is not a terminal either.
    """

    def __init__(self, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.stream = sys.stdout if stream is None else stream
        self.live = enabled and is_terminal(self.stream)
        """Bars on this line are drawn."""
        self.bars: list[ProgressBar] = []
        """The open bars, the one drawn last."""
        encoding = getattr(self.stream, "encoding", None) or "ascii"
        try:
            " ▏▎▍▌▋▊▉█·…".encode(encoding)  # tqdm's bar, the postfixes' separators
            self.unicode = True
        except (UnicodeEncodeError, LookupError):
            self.unicode = False

    def bar(
        self, label: str, total: float, unit: str, *, initial: float = 0.0, leave: bool = False
    ) -> ProgressBar:
        """A new bar on this line, over the ones open (arguments as `ProgressBar`'s)."""
        return ProgressBar(label, total, unit, line=self, initial=initial, leave=leave)

    def width(self) -> int:
        """The columns a bar may fill: ``COLUMNS`` or the terminal's (80 if unknown), less
        one (a line that fills the last column wraps on some terminals)."""
        columns = shutil.get_terminal_size((0, 0)).columns if "COLUMNS" in os.environ else 0
        if columns <= 0:
            try:
                columns = os.get_terminal_size(self.stream.fileno()).columns
            except (AttributeError, ValueError, OSError):  # no file descriptor, or no size
                columns = 0
        return max((columns or 80) - 1, 1)

    def clear(self) -> None:
        """Erase the bar on the line, if any (before a log line is printed)."""
        if self.bars:
            self.bars[-1].clear()

    def redraw(self) -> None:
        """Draw the top bar again as it last was (after a log line)."""
        if self.bars:
            self.bars[-1].refresh()

    def close(self) -> None:
        """Close every open bar, the top one first (the run ends, or stops on an error)."""
        while self.bars:
            self.bars[-1].close()


class ProgressBar:
    """One live bar: label, bar, done/total in a unit, percentage, rate, elapsed time,
    time left and a postfix, drawn by tqdm.

    The bar's tqdm is made at its first frame; its clock (elapsed time, rate, time left)
    starts there. The time the bar spends covered by bars above it counts in none of them
    (tqdm's ``unpause`` when it comes back): its rate is its own progress's.

    Args:
        label: What progresses (``heatup``, ``train``).
        total: Where the bar is full, in ``unit``.
        unit: What ``done`` and ``total`` count (``env steps``, ``episodes``).
        stream: The terminal, for a bar on a line of its own (default ``sys.stdout``).
        line: The line to draw on, shared with other bars (instead of ``stream``).
        initial: ``done`` when the bar opens (a resumed run's progress so far).
        leave: Keep the last frame on the screen when closed, else erase it.
        clock: Seconds, for when the next frame is due (tests give their own).
        min_interval: Seconds between two frames, at least.
    """

    def __init__(
        self,
        label: str,
        total: float,
        unit: str,
        stream: TextIO | None = None,
        *,
        line: ProgressLine | None = None,
        initial: float = 0.0,
        leave: bool = False,
        clock: Callable[[], float] = time.monotonic,
        min_interval: float = 0.1,
    ) -> None:
        self.label = label
        self.total = total
        self.unit = unit
        self.line = line if line is not None else ProgressLine(stream)
        self.leave = leave
        self.done = initial
        self.postfix = ""
        self.closed = False
        self._clock = clock
        self._min_interval = min_interval
        self._next_draw = -math.inf
        self._tqdm: _LineBar | None = None
        """The bar as tqdm draws it, from the first frame on."""
        self._shown: tuple[float, str] | None = None
        """``done`` and the postfix that the last frame showed."""
        bars = self.line.bars
        if bars:
            bars[-1].clear()  # covered from now on
        bars.append(self)

    # -- driving -----------------------------------------------------------------------------

    @property
    def drawn(self) -> bool:
        """The bar is on the screen: its line is live and no bar covers it."""
        return self.line.live and not self.closed and self.line.bars[-1] is self

    def due(self) -> bool:
        """An `update` now would draw: callers may skip building ``done`` and the postfix
        when it is not."""
        return self.drawn and self._clock() >= self._next_draw

    def update(self, done: float, postfix: str = "") -> None:
        """Set the progress (an absolute position, in the bar's unit) and the postfix;
        draw if the last frame is ``min_interval`` old or the bar just became full. A bar
        covered by another passes every update on to its tqdm, which draws it nowhere:
        where it comes back, it shows where it stood and its rate goes on from there."""
        self.done, self.postfix = done, postfix
        if self.closed or not self.line.live:
            return
        now = self._clock()
        full = (self._shown is None or self._shown[0] < self.total) and self.total <= done
        if full or not self.drawn or now >= self._next_draw:
            self._draw(now)

    def refresh(self) -> None:
        """Draw now, as the bar last was."""
        if not self.drawn:
            return
        if self._tqdm is None:
            self._draw(self._clock())
        else:
            self._tqdm.refresh()

    def clear(self) -> None:
        """Erase the bar from the screen until its next frame."""
        if self.drawn and self._tqdm is not None:
            self._tqdm.clear()

    def close(self) -> None:
        """Take the bar off its line: its last frame stays (``leave``) or is erased; the bar
        it covered comes back."""
        if self.closed:
            return
        line = self.line
        on_top = line.bars[-1] is self
        if line.live and self.leave and self._shown != (self.done, self.postfix):
            self._draw(self._clock())  # the frame left shows where the bar stopped
        if self._tqdm is not None:
            self._tqdm.close()  # drawn nowhere if the bar is covered
        self.closed = True
        line.bars.remove(self)
        if on_top and line.bars:
            line.bars[-1]._uncover()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- tqdm --------------------------------------------------------------------------------

    def _draw(self, now: float) -> None:
        bar = self._tqdm
        if bar is None:
            self._tqdm = _LineBar(self)  # drawn as it is made
        else:
            bar.set_postfix_str(self.postfix, refresh=False)
            if self.done != bar.n:
                bar.update(self.done - bar.n)  # a measure of the rate, and a frame
            else:
                bar.refresh()  # no progress: no measure of the rate
        self._shown = (self.done, self.postfix)
        self._next_draw = now + self._min_interval

    def _uncover(self) -> None:
        """The bar above closed: this one is drawn again, its clock going on from here."""
        if self._tqdm is not None:
            self._tqdm.unpause()
        self.refresh()


class _LineBar(tqdm):  # type: ignore[misc]  # tqdm ships no type hints
    """The tqdm of a `ProgressBar`: its counts in `format_count`'s figures (``21k/50k env
    steps``), the width of its line, and a postfix cut to leave the bar `MIN_BAR` columns
    (tqdm would shrink the bar to one column first, then cut the line's end).

    It redraws on every ``update`` (``mininterval=0``): the `ProgressBar` decides when. Its
    frames go to `_Frames`, which passes them on to the terminal while the bar is on top of
    its line.
    """

    monitor_interval = 0
    """No monitor thread: tqdm's monitor only wakes bars that wait for a count of updates
    (``miniters``), and these wait for none."""

    def __init__(self, bar: ProgressBar) -> None:
        self.progress_bar = bar
        super().__init__(
            total=bar.total,
            initial=bar.done,
            desc=bar.label,
            postfix=bar.postfix or None,
            file=_Frames(bar),
            leave=bar.leave,
            ascii=not bar.line.unicode,
            bar_format=BAR_FORMAT,
            unit="",  # the rate as ``1.02k/s``: the unit is in the count
            unit_scale=True,
            smoothing=SMOOTHING,
            mininterval=0,
            miniters=0,
            position=0,  # every bar of a line is on that line
        )

    @property
    def format_dict(self) -> dict[str, Any]:
        values: dict[str, Any] = super().format_dict
        line = self.progress_bar.line
        done, total = values["n"], values["total"]
        values["count"] = f"{format_count(done)}/{format_count(total)} {self.progress_bar.unit}"
        values["n"] = min(done, total)  # past the budget: a full bar (the count tells)
        values["ncols"] = line.width()
        postfix = values["postfix"]
        if postfix:
            # The line without the postfix and the bar: tqdm's line without the postfix,
            # less the ten columns of bar it draws where it is given no width.
            plain = self.format_meter(**{**values, "postfix": None, "ncols": None})
            room = values["ncols"] - (disp_len(plain) - 10) - MIN_BAR - len(", ")
            postfix = _cut(postfix, room)
            values["postfix"] = postfix if line.unicode else _ascii(postfix)
        return values


class _Frames:
    """Where a bar's tqdm writes: the terminal, while the bar is on top of its line (a
    covered bar's frames, and its erasing on close, go nowhere)."""

    def __init__(self, bar: ProgressBar) -> None:
        self.bar = bar

    def write(self, text: str) -> None:
        if self.bar.drawn:
            self.bar.line.stream.write(text)

    def flush(self) -> None:
        self.bar.line.stream.flush()


def _cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` columns, an ellipsis where it was cut; nothing where
    too little of it would be left to read."""
    if disp_len(text) <= width:
        return text
    return disp_trim(text, width - 1) + "…" if width >= 6 else ""


def _ascii(text: str) -> str:
    return text.translate(_ASCII).encode("ascii", "replace").decode("ascii")


class ConsoleHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """A `logging` handler that prints each record above the live bars of its line.

    Args:
        line: The line whose stream the records go to.
    """

    def __init__(self, line: ProgressLine) -> None:
        super().__init__(line.stream)
        self.line = line

    def emit(self, record: logging.LogRecord) -> None:
        self.line.clear()
        super().emit(record)
        self.line.redraw()
