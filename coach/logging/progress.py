"""Live progress bars on a terminal, and log lines printed above them.

A `ProgressBar` draws one line, ``train  42% |████▏     | 21k/50k env steps  1.02k/s  0:21
elapsed  0:29 left  reward 23.0``, and redraws it in place (a carriage return) at most ten
times a second. It draws only where its stream is a terminal (``isatty()``): on a pipe or a
file it writes nothing, so logs and CI output keep only their log lines.

Bars share the terminal's last line through a `ProgressLine`: bars opened on one line
stack, the newest is drawn and the ones beneath wait (a run's evaluation bar over its
training bar) until it closes. A log line goes above the bars: the line is cleared before it
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

which draws ``seeds  31% |███  | 77.3k/250k env steps ... seeds 1/5 done · seed_1 12.3k/50k ·
seed_2 15k/50k``.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import sys
import time
from collections.abc import Callable, Mapping
from typing import TextIO

MIN_BAR = 10
"""The narrowest bar drawn; below it the line gives up its optional parts first."""
MAX_BAR = 40
"""The widest bar drawn, however wide the terminal."""
SMOOTHING_SECONDS = 5.0
"""The rate is the progress over about the last this many seconds (exponentially weighted)."""
_PARTIAL = " ▏▎▍▌▋▊▉"
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


def format_duration(seconds: float | None) -> str:
    """``m:ss`` or ``h:mm:ss``; ``?`` when unknown."""
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return "?"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


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
        self._shown = 0
        encoding = getattr(self.stream, "encoding", None) or "ascii"
        try:
            (_PARTIAL + "█·…").encode(encoding)
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

    def show(self, text: str) -> None:
        """Put ``text`` on the line in place of what is there."""
        if not self.unicode:
            text = text.translate(_ASCII).encode("ascii", "replace").decode("ascii")
        pad = " " * max(self._shown - len(text), 0)
        self.stream.write(f"\r{text}{pad}")
        self.stream.flush()
        self._shown = len(text)

    def clear(self) -> None:
        """Erase the bar on the line, if any (before a log line is printed)."""
        if self._shown:
            self.stream.write("\r" + " " * self._shown + "\r")
            self.stream.flush()
            self._shown = 0

    def redraw(self) -> None:
        """Draw the top bar again as it last was (after a log line)."""
        if self.live and self.bars:
            self.bars[-1].refresh()

    def keep(self) -> None:
        """End the line as it is: what is on it stays, and the cursor goes below."""
        if self._shown:
            self.stream.write("\n")
            self.stream.flush()
            self._shown = 0

    def close(self) -> None:
        """Close every open bar, the top one first (the run ends, or stops on an error)."""
        while self.bars:
            self.bars[-1].close()


class ProgressBar:
    """One live bar: label, bar, done/total in a unit, percentage, rate, elapsed, time left
    and a postfix, fitted to the terminal's width.

    The rate is the progress over about the last `SMOOTHING_SECONDS` seconds during which the
    bar was drawn; the time left is what remains at that rate, stretched by the share of time
    the bar spent covered by bars above it (a training bar beneath evaluations finishes that
    much later).

    Args:
        label: What progresses (``heatup``, ``train``).
        total: Where the bar is full, in ``unit``.
        unit: What ``done`` and ``total`` count (``env steps``, ``episodes``).
        stream: The terminal, for a bar on a line of its own (default ``sys.stdout``).
        line: The line to draw on, shared with other bars (instead of ``stream``).
        initial: ``done`` when the bar opens (a resumed run's progress so far).
        leave: Keep the last frame on the screen when closed, else erase it.
        clock: Seconds, for the rate and the times (tests give their own).
        min_interval: Seconds between two redraws, at least.
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
        self.start = clock()
        self._next_draw = -math.inf
        # The rate: exponentially decayed sums of the progress and of the drawn time.
        self._sample = (self.start, initial)
        self._ema_done = 0.0
        self._ema_seconds = 0.0
        self._covered = 0.0
        self._covered_at: float | None = None
        bars = self.line.bars
        if bars:
            bars[-1]._covered_at = self.start
        bars.append(self)

    # -- driving -----------------------------------------------------------------------------

    @property
    def drawn(self) -> bool:
        """The bar is on the screen: its line is live and no bar covers it."""
        return self.line.live and not self.closed and self.line.bars[-1] is self

    def due(self) -> bool:
        """An `update` now would redraw: callers may skip building ``done`` and the postfix
        when it is not."""
        return self.drawn and self._clock() >= self._next_draw

    def update(self, done: float, postfix: str = "", draw: bool = True) -> None:
        """Set the progress (an absolute position, in the bar's unit) and the postfix;
        redraw if the last redraw is ``min_interval`` old or the bar just became full
        (never with ``draw=False``: a bar about to be covered keeps its state up to date)."""
        self.done, self.postfix = done, postfix
        if self.closed or not self.line.live:
            return
        now = self._clock()
        full = self._sample[1] < self.total <= done
        # A measure spans a redraw interval at least (the first frame has no rate yet), and
        # none is taken under another bar.
        if self._covered_at is None and (full or now - self._sample[0] >= self._min_interval):
            self._take_sample(now)
        if draw and self.drawn and (full or now >= self._next_draw):
            self._draw(now)

    def refresh(self) -> None:
        """Redraw now, as the bar last was."""
        if self.drawn:
            self._draw(self._clock())

    def clear(self) -> None:
        """Erase the bar from the screen until its next redraw."""
        if self.drawn:
            self.line.clear()

    def close(self) -> None:
        """Take the bar off its line: its last frame stays (``leave``) or is erased; the bar
        it covered comes back."""
        if self.closed:
            return
        line = self.line
        now = self._clock()
        on_top = line.bars[-1] is self
        if self.drawn:
            if self.leave:
                self._draw(now)
                line.keep()
            else:
                line.clear()
        self.closed = True
        line.bars.remove(self)
        if on_top and line.bars:
            line.bars[-1]._uncover(now)
            line.redraw()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the numbers -------------------------------------------------------------------------

    def _take_sample(self, now: float) -> None:
        at, done_then = self._sample
        seconds = now - at
        if seconds <= 0:
            return
        decay = math.exp(-seconds / SMOOTHING_SECONDS)
        self._ema_done = self._ema_done * decay + (self.done - done_then)
        self._ema_seconds = self._ema_seconds * decay + seconds
        self._sample = (now, self.done)

    @property
    def rate(self) -> float | None:
        """Units a second, smoothed; ``None`` before the first measure."""
        return self._ema_done / self._ema_seconds if self._ema_seconds > 0 else None

    def remaining_seconds(self, now: float) -> float | None:
        """The time left: what remains at the current rate, stretched by the share of the
        elapsed time that the bar was covered."""
        rate = self.rate
        if rate is None or rate <= 0:
            return None
        remaining = max(self.total - self.done, 0.0)
        elapsed = now - self.start
        covered = self._covered + (now - self._covered_at if self._covered_at is not None else 0)
        shown = elapsed - covered
        stretch = elapsed / shown if shown > 0 else 1.0
        return remaining / rate * stretch

    def _uncover(self, now: float) -> None:
        if self._covered_at is None:
            return
        gap = now - self._covered_at
        self._covered += gap
        at, done = self._sample
        self._sample = (at + gap, done)  # the rate leaves the covered time out
        self._covered_at = None

    # -- the text ----------------------------------------------------------------------------

    def render(self, width: int, now: float | None = None) -> str:
        """The bar's line in at most ``width`` columns.

        Where the terminal is narrow, the bar shrinks to `MIN_BAR` columns, then the postfix
        is cut, then the elapsed time, the bar itself and the rate go, in that order.
        """
        now = self._clock() if now is None else now
        fraction = 1.0 if self.total <= 0 else min(max(self.done / self.total, 0.0), 1.0)
        head = f"{self.label} {fraction * 100:3.0f}%"
        counts = f"{format_count(self.done)}/{format_count(self.total)} {self.unit}"
        rate = self.rate
        speed = f"{format_count(rate) if rate is not None else '?'}/s"
        elapsed = f"{format_duration(now - self.start)} elapsed"
        left = f"{format_duration(self.remaining_seconds(now))} left"
        tail = "  ".join([counts, speed, elapsed, left])
        room = width - len(head) - len(tail) - 4  # the bar's edges and the spaces around
        postfix = f"  {self.postfix}" if self.postfix else ""
        if room - len(postfix) >= MIN_BAR:
            size = min(room - len(postfix), MAX_BAR)
            return f"{head} |{self._fill(size, fraction)}| {tail}{postfix}"
        if room >= MIN_BAR:
            cut = _cut(self.postfix, room - MIN_BAR - 2)
            postfix = f"  {cut}" if cut else ""
            return f"{head} |{self._fill(MIN_BAR, fraction)}| {tail}{postfix}"
        tail = "  ".join([counts, speed, left])
        if width - len(head) - len(tail) - 4 >= MIN_BAR:
            return f"{head} |{self._fill(MIN_BAR, fraction)}| {tail}"
        if len(head) + 2 + len(tail) <= width:
            return f"{head}  {tail}"
        return _cut(f"{head}  {counts}  {left}", width)

    def _fill(self, size: int, fraction: float) -> str:
        if not self.line.unicode:
            full = int(fraction * size)
            return "#" * full + "-" * (size - full)
        eighths = int(fraction * size * 8)
        full, part = divmod(eighths, 8)
        bar = "█" * full + (_PARTIAL[part] if full < size else "")
        return bar + " " * (size - len(bar))

    def _draw(self, now: float) -> None:
        self.line.show(self.render(self.line.width(), now))
        self._next_draw = now + self._min_interval


def _cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` columns, an ellipsis where it was cut; nothing where
    too little of it would be left to read."""
    if len(text) <= width:
        return text
    return text[: width - 1] + "…" if width >= 6 else ""


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
