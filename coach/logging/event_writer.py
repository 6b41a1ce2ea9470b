"""A TensorBoard event file writer that stays off the hot path.

TensorBoard's own writers hand every event to a background thread through a queue, which
costs about 70 microseconds per scalar here, mostly in GIL hand-offs. This writer only
appends ``(tag, value, step, time)`` to a list and serializes the list, in TensorBoard's
record format, when it is flushed (the logger flushes on its progress ticks, after each
evaluation and on close). Files read back with TensorBoard's ``EventAccumulator``.

A scalar event is encoded here (`scalar_event`): the same bytes as protobuf's
``Event.SerializeToString()``. Every event is framed here too (`record`), with CRC-32C
checksums from ``google-crc32c``'s C code.
TensorBoard's own framing computes them in pure Python, byte by byte: with the protobuf
objects, about 7 µs a scalar, half a microsecond of every env step of a short-episode heatup
(two scalars an episode).
"""

from __future__ import annotations

import math
import socket
import struct
import time
from pathlib import Path

import google_crc32c
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.proto.summary_pb2 import Summary

_file_counter = 0

_U64 = struct.Struct("<Q")
_U32 = struct.Struct("<I")
_F64 = struct.Struct("<d")
_F32 = struct.Struct("<f")


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # an int64 below zero is its two's complement
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _float32(value: float) -> bytes:
    try:
        return _F32.pack(value)
    except OverflowError:  # beyond float32: infinity, as protobuf rounds it
        return _F32.pack(math.copysign(math.inf, value))


def _masked_crc(data: bytes) -> bytes:
    crc = google_crc32c.value(data)
    return _U32.pack((((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF)


def scalar_event(tag: str, value: float, step: int, wall_time: float) -> bytes:
    """``Event(step, wall_time, summary=Summary(value=[Value(tag, simple_value)]))``
    serialized, byte for byte as protobuf writes it (proto3: an empty tag, a zero step or
    wall time is left out; the simple value, in a oneof, never is)."""
    head = _SUMMARY_HEADS.get(tag)
    if head is None:
        head = _summary_head(tag)
        if len(_SUMMARY_HEADS) < 4096:  # a run's tags, not every tag ever made
            _SUMMARY_HEADS[tag] = head
    event = b""
    if wall_time != 0.0 or math.copysign(1.0, wall_time) < 0:
        event = b"\x09" + _F64.pack(wall_time)
    if step:
        event += b"\x10" + (bytes((step,)) if 0 < step < 0x80 else _varint(step))
    return event + head + _float32(value)


_SUMMARY_HEADS: dict[str, bytes] = {}
"""Per tag, an event's summary field up to the scalar's four bytes (`_summary_head`): a
run writes the same few tags over and over."""


def _summary_head(tag: str) -> bytes:
    name = tag.encode()
    entry = (b"\x0a" + _varint(len(name)) + name if name else b"") + b"\x15"
    summary = b"\x0a" + _varint(len(entry) + 4) + entry
    return b"\x2a" + _varint(len(summary) + 4) + summary


def record(data: bytes) -> bytes:
    """``data`` framed as a TFRecord: its length and the masked CRC-32C of each."""
    header = _U64.pack(len(data))
    return header + _masked_crc(header) + data + _masked_crc(data)


class EventWriter:
    """Buffered scalar events for one TensorBoard run (one folder).

    Args:
        directory: The run's folder; created if missing.
        resume: ``(file name, byte offset)`` of an event file to carry on: it is cut back to
            the offset (what was written after a checkpoint goes) and appended to.
    """

    def __init__(self, directory: Path, resume: tuple[str, int] | None = None) -> None:
        global _file_counter
        directory.mkdir(parents=True, exist_ok=True)
        self._pending: list[tuple[str, float, int, float]] = []
        if resume is not None:
            self.path = directory / resume[0]
            with open(self.path, "r+b") as f:
                f.truncate(resume[1])
            self._file = open(self.path, "ab")  # noqa: SIM115 - closed in close()
            return
        _file_counter += 1
        name = f"events.out.tfevents.{time.time():.6f}.{socket.gethostname()}.{_file_counter}"
        self.path = directory / name
        self._file = open(self.path, "wb")  # noqa: SIM115 - closed in close()
        self._file.write(
            record(Event(wall_time=time.time(), file_version="brain.Event:2").SerializeToString())
        )

    def write_summary(self, summary: Summary, step: int = 0) -> None:
        """Write a prepared summary (hparams, images) at once."""
        event = Event(step=step, wall_time=time.time(), summary=summary)
        self._file.write(record(event.SerializeToString()))
        self._file.flush()

    @property
    def offset(self) -> int:
        """Bytes written so far (after a flush, everything)."""
        return self._file.tell()

    def scalar(self, tag: str, value: float, step: int) -> None:
        self._pending.append((tag, float(value), int(step), time.time()))

    def flush(self) -> None:
        if self._pending:
            self._file.write(b"".join(record(scalar_event(*scalar)) for scalar in self._pending))
        self._pending.clear()
        self._file.flush()

    def close(self) -> None:
        if not self._file.closed:
            self.flush()
            self._file.close()
