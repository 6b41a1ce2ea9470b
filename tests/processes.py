"""Waiting on other processes by their events, never by sleeping: a line they print, their
exit. Every wait has a deadline, so that a test fails rather than hangs. Also what they are:
the processes below one (`descendants`), and the TCP addresses they listen on (`listening`)."""

from __future__ import annotations

import ipaddress
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO


class Console:
    """The output of ``process`` (started with its stdout, and maybe its stderr, on pipes),
    read line by line as it comes, by a thread per pipe: a process that keeps printing never
    blocks on a full pipe, and a test waits for the line that announces an event."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self._lines: dict[str, list[str]] = {"stdout": [], "stderr": []}
        self._ended = {"stdout": process.stdout is None, "stderr": process.stderr is None}
        self._changed = threading.Condition()
        self._cursor = 0
        """The next stdout line `wait_for` reads."""
        self._threads = [
            threading.Thread(target=self._read, args=(name, stream), daemon=True)
            for name, stream in (("stdout", process.stdout), ("stderr", process.stderr))
            if stream is not None
        ]
        for thread in self._threads:
            thread.start()

    def _read(self, name: str, stream: IO[str]) -> None:
        for line in stream:
            with self._changed:
                self._lines[name].append(line)
                self._changed.notify_all()
        with self._changed:
            self._ended[name] = True
            self._changed.notify_all()

    def wait_for(self, matches: Callable[[str], bool], timeout: float) -> str:
        """The next stdout line that ``matches`` (the lines before it are passed over).

        Raises:
            AssertionError: when stdout ends, or ``timeout`` seconds pass, without one.
        """
        deadline = time.monotonic() + timeout
        lines = self._lines["stdout"]
        with self._changed:
            while True:
                while self._cursor < len(lines):
                    self._cursor += 1
                    if matches(lines[self._cursor - 1]):
                        return lines[self._cursor - 1]
                seen = "".join(lines)
                if self._ended["stdout"]:
                    raise AssertionError(f"the output ended without the line awaited:\n{seen}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no line awaited within {timeout} s:\n{seen}")
                self._changed.wait(left)

    def finish(self, timeout: float) -> tuple[str, str]:
        """Wait for the process to exit; its whole stdout and stderr."""
        self.process.wait(timeout)
        for thread in self._threads:
            thread.join(timeout)
        return "".join(self._lines["stdout"]), "".join(self._lines["stderr"])


def wait_for_exit(pids: Iterable[int], timeout: float) -> set[int]:
    """Wait until every process of ``pids`` has exited (children or not, through pidfds that
    become readable at the exit), at most ``timeout`` seconds; return those still running."""
    handles = {}
    for pid in pids:
        try:
            handles[os.pidfd_open(pid)] = pid
        except ProcessLookupError:
            continue  # gone already
    poller = select.poll()
    for fd in handles:
        poller.register(fd, select.POLLIN)
    deadline = time.monotonic() + timeout
    try:
        while handles and (left := deadline - time.monotonic()) > 0:
            for fd, _ in poller.poll(left * 1000):
                poller.unregister(fd)
                os.close(fd)
                del handles[fd]
        return set(handles.values())
    finally:
        for fd in handles:
            os.close(fd)


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (children, their children, ...), from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # gone since the listing
        parent = int(stat.rsplit(")", 1)[1].split()[1])  # the name in () may hold spaces
        children.setdefault(parent, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def listening(pids: Iterable[int]) -> set[tuple[str, int]]:
    """The addresses and ports of the TCP sockets (IPv4 and IPv6) that ``pids`` listen on,
    from /proc: ``("127.0.0.1", 6006)``, ``("0.0.0.0", 80)``, ``("::", 80)``. An IPv6 socket
    bound to an IPv4-mapped address counts as that IPv4 address."""
    inodes = set()
    for pid in pids:
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[len("socket:[") : -1])
        except OSError:
            continue  # gone, or a descriptor closed while read
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN; 9: the inode
                address, port = fields[1].split(":")
                found.add((_address(address), int(port, 16)))
    return found


def _address(hex_address: str) -> str:
    """An address as /proc/net/tcp{,6} writes it (32-bit words in the host's byte order)."""
    raw = bytes.fromhex(hex_address)
    words = [raw[i : i + 4] for i in range(0, len(raw), 4)]
    flat = b"".join(word[::-1] if sys.byteorder == "little" else word for word in words)
    if len(flat) == 4:
        return str(ipaddress.IPv4Address(flat))
    address = ipaddress.IPv6Address(flat)
    return str(address.ipv4_mapped or address)
