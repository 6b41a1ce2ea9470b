"""Starting a TensorBoard server over an experiment path, on loopback only."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from coach.errors import CoachError


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_dashboard(
    logdir: Path, port: int | None = None, timeout: float = 60.0
) -> tuple[str, subprocess.Popen[bytes]]:
    """Start ``tensorboard --logdir logdir`` on 127.0.0.1 and wait until it answers.

    The server runs in its own session, so it outlives the run that started it; stop it
    with the returned process (or ``kill <pid>``).

    Returns:
        The server's URL and its process.
    """
    port = port or free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tensorboard.main",
            "--logdir",
            str(logdir),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise CoachError(f"TensorBoard exited at start (code {process.returncode})")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return url, process
        except OSError:
            time.sleep(0.3)
    process.kill()
    raise CoachError(f"TensorBoard did not answer on {url} within {timeout:.0f} s")
