"""A TensorBoard event file writer that stays off the hot path.

TensorBoard's own `EventFileWriter` hands every event to a background thread through a
queue, which costs about 70 microseconds per scalar here, mostly in GIL hand-offs. This
writer only appends ``(tag, value, step, time)`` to a list (`EventWriter.scalar`); when it
is flushed (the logger flushes on its progress ticks, after each evaluation and on close),
each scalar becomes TensorBoard's protobuf ``Event`` holding a ``Summary``, serialized by
protobuf and written by TensorBoard's ``RecordWriter``, which frames it as a TFRecord (its
length, then the data, each followed by its masked CRC-32C). Files read back with
TensorBoard's ``EventAccumulator``.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.summary.writer.record_writer import RecordWriter

_file_counter = 0


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
            self._records = RecordWriter(self._file)
            return
        _file_counter += 1
        name = f"events.out.tfevents.{time.time():.6f}.{socket.gethostname()}.{_file_counter}"
        self.path = directory / name
        self._file = open(self.path, "wb")  # noqa: SIM115 - closed in close()
        self._records = RecordWriter(self._file)
        self._write(Event(wall_time=time.time(), file_version="brain.Event:2"))

    def _write(self, event: Event) -> None:
        self._records.write(event.SerializeToString())

    def write_summary(self, summary: Summary, step: int = 0) -> None:
        """Write a prepared summary (hparams, images) at once."""
        self._write(Event(step=step, wall_time=time.time(), summary=summary))
        self._records.flush()

    @property
    def offset(self) -> int:
        """Bytes written so far (after a flush, everything)."""
        return self._file.tell()

    def scalar(self, tag: str, value: float, step: int) -> None:
        """Keep a scalar for the next flush, stamped with the time now."""
        self._pending.append((tag, float(value), int(step), time.time()))

    def flush(self) -> None:
        """Write the scalars kept since the last flush, and flush the file."""
        for tag, value, step, wall_time in self._pending:
            summary = Summary(value=[Summary.Value(tag=tag, simple_value=value)])
            self._write(Event(step=step, wall_time=wall_time, summary=summary))
        self._pending.clear()
        self._records.flush()

    def close(self) -> None:
        if not self._file.closed:
            self.flush()
            self._records.close()
