"""The event writer's files, read back by TensorBoard's own readers."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.proto.summary_pb2 import Summary

from coach.logging import event_writer
from coach.logging.event_writer import EventWriter

VALUES = st.floats(allow_nan=False) | st.sampled_from([math.inf, -math.inf, 0.0, -0.0, 3e38])
STEPS = st.integers(-(2**63), 2**63 - 1)


def as_float32(value: float) -> float:
    """``value`` as TensorBoard stores a simple value: a float32, infinity beyond its range."""
    with np.errstate(over="ignore"):
        return float(np.float32(value))


def written(directory: Path, scalars: list[tuple[str, float, int]], wall_time: float) -> Path:
    """The event file of a writer given ``scalars``, each stamped ``wall_time``."""
    writer = EventWriter(directory)
    with mock.patch.object(event_writer.time, "time", return_value=wall_time):
        for scalar in scalars:
            writer.scalar(*scalar)
    writer.close()
    return writer.path


@given(
    tag=st.text(min_size=0, max_size=300),
    value=VALUES,
    step=STEPS,
    wall_time=st.floats(allow_nan=False) | st.just(0.0),
)
def test_a_scalar_reads_back_as_written(tag, value, step, wall_time):
    small = step % 200  # a one-byte step too
    with tempfile.TemporaryDirectory() as directory:
        written(Path(directory), [(tag, value, step), (tag, value, small)], wall_time)
        accumulator = EventAccumulator(directory)
        accumulator.Reload()
    assert accumulator.Tags()["scalars"] == [tag]
    events = accumulator.Scalars(tag)
    assert [(e.wall_time, e.step) for e in events] == [(wall_time, step), (wall_time, small)]
    expected = as_float32(value)
    for e in events:  # the sign of a zero kept
        assert (e.value, math.copysign(1.0, e.value)) == (expected, math.copysign(1.0, expected))


@given(
    scalars=st.lists(st.tuples(st.text(max_size=300), VALUES, STEPS), min_size=1, max_size=20),
    wall_time=st.floats(allow_nan=False),
)
def test_every_record_passes_tensorboard_s_checks(scalars, wall_time):
    expected = [
        Event(
            step=step,
            wall_time=wall_time,
            summary=Summary(value=[Summary.Value(tag=tag, simple_value=value)]),
        )
        for tag, value, step in scalars
    ]
    with tempfile.TemporaryDirectory() as directory:
        path = written(Path(directory), scalars, wall_time)
        header, *records = RawEventFileLoader(str(path)).Load()
        assert Event.FromString(header).file_version == "brain.Event:2"
        assert [Event.FromString(r) for r in records] == expected
        # A byte changed in the last record's data: its checksum no longer matches, and
        # TensorBoard's reader stops before it.
        data = bytearray(path.read_bytes())
        data[-5] ^= 0xFF
        path.write_bytes(bytes(data))
        assert len(list(RawEventFileLoader(str(path)).Load())) == len(scalars)


def test_a_nan_value_is_written_and_read_back_as_nan(tmp_path: Path):
    writer = EventWriter(tmp_path / "run")
    writer.scalar("Train/loss", math.nan, 3)
    writer.scalar("Train/loss", 2.5, 4)
    writer.close()
    accumulator = EventAccumulator(str(tmp_path / "run"))
    accumulator.Reload()
    events = accumulator.Scalars("Train/loss")
    assert [e.step for e in events] == [3, 4]
    assert math.isnan(events[0].value) and events[1].value == pytest.approx(2.5)
