"""Live progress bars drawn into a fake terminal, with a clock the tests set."""

from __future__ import annotations

import io
import logging

import pytest

from coach.logging.progress import (
    ConsoleHandler,
    ProgressBar,
    ProgressLine,
    format_count,
    group_postfix,
)
from tests.toys import FakeTerminal


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """The clock of the bars' frames and of tqdm's measures (tqdm reads ``tqdm.std.time``;
    the test fails there if tqdm no longer does)."""
    clock = Clock()
    monkeypatch.setattr("tqdm.std.time", clock)
    return clock


@pytest.fixture(autouse=True)
def columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "121")  # 120 columns to draw in
    monkeypatch.delenv("TERM", raising=False)


def frames(text: str) -> list[str]:
    """What was drawn, frame by frame (each starts with a carriage return)."""
    return [f.rstrip(" ") for f in text.split("\r") if f.strip()]


def test_the_line_shows_label_bar_counts_rate_elapsed_and_time_left(clock: Clock) -> None:
    stream = FakeTerminal()
    bar = ProgressBar("train", 50_000, "env steps", stream, clock=clock)
    bar.update(0)
    clock.now = 20.0
    bar.update(20_000, "reward 23.0")
    # 20k steps in 20 s: 1k/s, and 30k left take 30 s. Each frame fills the 120 columns.
    first, second = frames(stream.getvalue())
    counts = "| 0/50k env steps  ?/s  00:00 elapsed  ? left"
    assert first == "train   0% |" + " " * (120 - 12 - len(counts)) + counts
    counts = "| 20k/50k env steps  1.00k/s  00:20 elapsed  00:30 left, reward 23.0"
    width = 120 - 12 - len(counts)
    assert second.startswith("train  40% |" + "█" * (2 * width // 5))
    assert second.endswith(counts) and len(second) == 120


def test_time_without_progress_counts_in_the_rate(clock: Clock) -> None:
    stream = FakeTerminal()
    bar = ProgressBar("trials", 10_000, "trials", stream, clock=clock)
    bar.update(0)
    clock.now = 1.0
    bar.update(100)  # 100/s
    clock.now = 2.0
    bar.update(100, "2 running")  # a frame for the postfix alone: no measure of the rate
    clock.now = 3.0
    bar.update(200)  # 100 more in the 2 s since the last progress: 50/s, in the average
    shown = frames(stream.getvalue())
    assert "100/s" in shown[1] and "100/s" in shown[2] and shown[2].endswith("2 running")
    assert len(shown) == 4 and "66.1/s" in shown[3]  # tqdm's moving average of 100 and 50
    clock.now = 3.05
    bar.update(300)  # within a redraw interval: not drawn
    assert len(frames(stream.getvalue())) == 4 and bar.done == 300


def test_time_under_another_bar_counts_in_neither_its_rate_nor_its_times(clock: Clock) -> None:
    stream = FakeTerminal()
    line = ProgressLine(stream)
    train = ProgressBar("train", 1000, "env steps", line=line, clock=clock)
    train.update(0)
    clock.now = 10.0
    train.update(100)  # 10/s
    evaluation = ProgressBar("evaluate", 5, "episodes", line=line, clock=clock)
    assert not train.drawn and evaluation.drawn
    clock.now = 15.0
    evaluation.update(5)
    evaluation.close()  # 5 s of the 15 under the evaluation
    clock.now = 25.0
    train.update(200)  # 10/s again, the evaluation's 5 s left out
    # 20 s drawn of the 25, and 800 steps left at 10/s.
    assert "| 200/1k env steps  10.0/s  00:20 elapsed  01:20 left" in frames(stream.getvalue())[-1]


def test_every_frame_fits_the_line_the_postfix_giving_way_first(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    stream = FakeTerminal()
    bar = ProgressBar("train", 50_000, "env steps", stream, clock=clock)
    bar.update(0)
    clock.now = 21.0
    bar.update(21_000, "reward 23.0 · eval 45.1")

    def drawn_in(columns: int) -> str:
        monkeypatch.setenv("COLUMNS", str(columns))
        bar.refresh()
        return stream.getvalue().rsplit("\r", 1)[-1].rstrip(" ")  # (padded to the last frame)

    wide = drawn_in(201)
    assert len(wide) == 200 and wide.endswith("00:29 left, reward 23.0 · eval 45.1")
    cut = drawn_in(96)  # the postfix cut, the bar kept ten columns wide
    assert cut == (
        "train  42% |████▏     | 21k/50k env steps  1.00k/s  00:21 elapsed  00:29 left, "
        "reward 23.0 · e…"
    )
    narrow = drawn_in(81)  # no room for the postfix: it goes
    assert len(narrow) == 80 and narrow.startswith("train  42% |████")
    assert narrow.endswith("| 21k/50k env steps  1.00k/s  00:21 elapsed  00:29 left")
    for columns in range(2, 202):
        assert len(drawn_in(columns)) <= columns - 1


def test_redraws_at_most_ten_times_a_second_and_when_full() -> None:
    clock, stream = Clock(), FakeTerminal()
    bar = ProgressBar("heatup", 100, "env steps", stream, clock=clock)
    for step in range(1, 100):
        clock.now = step * 0.01
        bar.update(step)
    assert len(frames(stream.getvalue())) == 10  # at 0.01, 0.11, ..., 0.91 s
    clock.now = 0.995
    bar.update(100)  # full: drawn at once
    assert "100%" in frames(stream.getvalue())[-1] and "100/100" in stream.getvalue()


def test_nothing_is_written_where_the_stream_is_no_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stream = io.StringIO()
    line = ProgressLine(stream)
    bar = line.bar("train", 10, "env steps")
    bar.update(5, "reward 1.0")
    bar.update(10)
    bar.close()
    assert not line.live and stream.getvalue() == ""
    monkeypatch.setenv("TERM", "dumb")  # a terminal that cannot redraw a line
    assert not ProgressLine(FakeTerminal()).live
    assert not ProgressLine(FakeTerminal(), enabled=False).live  # a quiet run


def test_log_lines_print_above_the_bar() -> None:
    stream = FakeTerminal()
    line = ProgressLine(stream)
    log = logging.getLogger("test_progress.above")
    log.propagate = False
    handler = ConsoleHandler(line)
    log.addHandler(handler)
    try:
        bar = line.bar("train", 10, "env steps")
        bar.update(4)
        drawn = stream.getvalue()
        log.warning("a log line")
    finally:
        log.removeHandler(handler)
    after = stream.getvalue()[len(drawn) :]
    # Erased (spaces over the bar, back to the start), the record, the bar again.
    width = len(drawn) - 1
    assert after.startswith("\r" + " " * width + "\r" + "a log line\n" + "\rtrain  40%")


def test_close_erases_the_bar_or_leaves_its_last_frame() -> None:
    stream = FakeTerminal()
    line = ProgressLine(stream)
    bar = line.bar("evaluate", 3, "episodes")
    bar.update(1)
    bar.close()
    assert stream.getvalue().endswith("\r" + " " * len(frames(stream.getvalue())[0]) + "\r")
    kept = line.bar("train", 3, "env steps", leave=True)
    kept.update(2)
    kept.close()
    assert stream.getvalue().endswith("| 2/3 env steps  ?/s  00:00 elapsed  ? left\n")
    kept.close()  # twice is once
    assert stream.getvalue().endswith("left\n")


def test_an_interrupted_run_leaves_the_terminal_clean() -> None:
    stream = FakeTerminal()
    line = ProgressLine(stream)
    train = line.bar("train", 100, "env steps", leave=True)
    train.update(40)
    evaluation = line.bar("evaluate", 10, "episodes")
    evaluation.update(3)
    line.close()  # Ctrl-C: every bar closes, the top one first
    assert line.bars == [] and evaluation.closed and train.closed
    text = stream.getvalue()
    assert text.endswith("\n") and "train  40%" in text.rsplit("\r", 1)[-1]


def test_the_bar_beneath_comes_back_when_the_one_over_it_closes() -> None:
    stream = FakeTerminal()
    line = ProgressLine(stream)
    train = line.bar("train", 100, "env steps")
    train.update(40)
    evaluation = line.bar("evaluate", 10, "episodes")
    train.update(50)  # covered: not drawn
    assert "train  50%" not in stream.getvalue()
    evaluation.update(10)
    evaluation.close()
    assert frames(stream.getvalue())[-1].startswith("train  50%")


def test_an_ascii_terminal_gets_an_ascii_bar() -> None:
    stream = FakeTerminal()
    stream.encoding = "ascii"  # type: ignore[misc]
    bar = ProgressBar("seeds", 4, "runs", stream)
    bar.update(1, group_postfix("seeds", 1, 4, {"seed_1": (500, 1000)}))
    (frame,) = frames(stream.getvalue())
    assert frame.isascii()
    filled = frame.split("|")[1]
    assert frame.startswith("seeds  25% |" + "#" * (len(filled) // 4))  # a quarter
    assert frame.endswith("seeds 1/4 done - seed_1 500/1k")


def test_counts_and_the_group_postfix() -> None:
    assert [format_count(v) for v in (0, 950, 999.7, 1000, 12_345, 50_000, 1.5e6, 0.25)] == [
        "0", "950", "1k", "1k", "12.3k", "50k", "1.5M", "0.25",
    ]  # fmt: skip
    running = {"seed_2": (12_300.0, 50_000.0), "seed_3": (4000.0, 50_000.0)}
    assert group_postfix("seeds", 2, 5, running) == (
        "seeds 2/5 done · seed_2 12.3k/50k · seed_3 4k/50k"
    )


def test_the_width_is_the_terminals_less_one(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ProgressLine(FakeTerminal()).width() == 120  # COLUMNS=121
    monkeypatch.delenv("COLUMNS")
    assert ProgressLine(FakeTerminal()).width() == 79  # no size to ask for: 80 columns


@pytest.mark.parametrize("leave", [True, False])
@pytest.mark.parametrize("drawn_before", [True, False])
def test_a_bar_closed_beneath_another_leaves_the_line_alone(
    leave: bool, drawn_before: bool
) -> None:
    stream = FakeTerminal()
    line = ProgressLine(stream)
    below = line.bar("train", 10, "env steps", leave=leave)
    if drawn_before:
        below.update(3)
    above = line.bar("evaluate", 10, "episodes")
    above.update(5)
    below.update(4)
    drawn = stream.getvalue()
    below.close()
    assert stream.getvalue() == drawn and line.bars == [above] and above.drawn
