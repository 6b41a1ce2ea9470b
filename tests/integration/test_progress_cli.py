"""The console's live progress bars in a real ``coach`` run on a pseudo-terminal; log.txt
keeps the log lines only. (A run on a pipe draws none: tests/integration/test_cli.py.)"""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import time
from pathlib import Path

import pytest

from tests.integration.coach_cli import COMMAND, ENV, SMALL, experiment, overriding


def read_terminal(fd: int, process: subprocess.Popen[bytes], timeout: float = 240) -> str:
    """Everything written to the pseudo-terminal ``fd`` until the run closes it."""
    chunks = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            if process.poll() is not None:
                break
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the run ended, the terminal's other side is closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.fixture(scope="module")
def on_terminal(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """A short run with a pseudo-terminal for its console: what it showed, its folder."""
    root = tmp_path_factory.mktemp("progress")
    return on_a_terminal(root, columns=100), experiment(root)


def on_a_terminal(root: Path, *args: str, columns: int, command: tuple[str, ...] = ()) -> str:
    """What a short CartPole_DQN run in ``root`` (or ``coach <command>`` on it) shows on a
    pseudo-terminal ``columns`` wide."""
    env = {**ENV, "COLUMNS": str(columns)}
    env.pop("TERM", None)
    main, terminal = pty.openpty()
    process = subprocess.Popen(
        [*COMMAND, *command, "-p", "CartPole_DQN", *overriding(SMALL, ["-ep", str(root), *args])],
        stdin=subprocess.DEVNULL,
        stdout=terminal,
        stderr=terminal,
        cwd=root,
        env=env,
    )
    os.close(terminal)
    try:
        shown = read_terminal(main, process)
    finally:
        os.close(main)
    assert process.wait(timeout=60) == 0, shown
    return shown


def test_a_terminal_shows_live_bars_up_to_the_budget(on_terminal: tuple[str, Path]) -> None:
    shown, run = on_terminal
    frames = [f for f in shown.split("\r") if "|" in f]
    assert any(f.startswith("heatup   100% |") and "300/300 env steps" in f for f in frames)
    assert any(f.startswith("evaluate 100% |") and "3/3 episodes" in f for f in frames)
    assert any(f.startswith("train    100% |") and "1.2k/1.2k env steps" in f for f in frames)
    assert all(len(f.rstrip(" \n")) <= 99 for f in frames)  # COLUMNS=100, less one
    # Rate and time left, measured once the bar has run a while.
    assert any(re.search(r"[\d.]+k?/s  \d+:\d\d elapsed  \d+:\d\d left", f) for f in frames)
    # The log lines are there as ever, each on a line of its own; the run ends on a clean line.
    assert "\r\n" in shown and "evaluate env steps" in shown and shown.endswith("\n")
    log = (run / "log.txt").read_text()
    assert "evaluate env steps" in log and "done: best evaluation" in log
    assert not any(mark in log for mark in ("\r", "█", "% |"))


def test_a_group_of_seeds_shows_one_line_for_all_of_them(tmp_path: Path) -> None:
    longer = "schedule.improve_steps=EnvironmentSteps(3000)"  # a few reports from each seed
    shown = on_a_terminal(tmp_path, "--seeds", "0-2", "-cp", longer, columns=140)
    frames = shown.replace("\r\n", "\n").split("\r")
    group = [f for f in frames if f.startswith("seeds ")]
    assert group and all("env steps" in f and "seeds " in f for f in group)
    assert re.search(r"seeds 100% \|.*\| 9k/9k env steps .*seeds \d/3 done", shown)
    assert any(re.search(r"seeds [0-2]/3 done · seed_\d \S+/3k", f) for f in group), group
    # The seeds draw nothing of their own: one line is the group's.
    assert not any(f.lstrip().startswith(("train ", "heatup ", "evaluate")) for f in frames)
    log = (experiment(tmp_path) / "log.txt").read_text()
    assert "\r" not in log and "█" not in log and "seed 2 finished" in log


def test_a_tuning_study_shows_one_line_over_its_trials(tmp_path: Path) -> None:
    space = tmp_path / "space.yaml"
    space.write_text(
        "parameters:\n  agent.network_wrappers.main.learning_rate: {float: [1.0e-4, 1.0e-2]}\n"
    )
    args = ("--space", str(space), "--trials", "2", "-j", "2")
    shown = on_a_terminal(tmp_path, *args, columns=140, command=("tune",))
    frames = shown.replace("\r\n", "\n").split("\r")
    assert any(f.startswith("trials") and "0/2 trials" in f and "2 running" in f for f in frames)
    assert re.search(r"trials +100% \|.*\| 2/2 trials .*trials 2/2 done · 0 running · best", shown)
    assert "trial 0" in shown and "trial 1" in shown  # the trials' lines, above the bar
