"""The event writer's own scalar encoding: protobuf's bytes, TensorBoard's framing."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

from coach.logging.event_writer import EventWriter, record, scalar_event


def _protobuf(tag: str, value: float, step: int, wall_time: float) -> bytes:
    summary = Summary(value=[Summary.Value(tag=tag, simple_value=value)])
    return Event(step=step, wall_time=wall_time, summary=summary).SerializeToString()


@given(
    tag=st.text(min_size=0, max_size=300),
    value=st.floats(allow_nan=False) | st.sampled_from([math.inf, -math.inf, 0.0, -0.0, 3e38]),
    step=st.integers(-(2**63), 2**63 - 1),
    wall_time=st.floats(allow_nan=False) | st.just(0.0),
)
def test_a_scalar_event_is_protobuf_s_bytes(tag, value, step, wall_time):
    expected = _protobuf(tag, value, step, wall_time)
    assert scalar_event(tag, value, step, wall_time) == expected
    assert scalar_event(tag, value, step, wall_time) == expected  # the tag's head kept
    small = step % 200  # one-byte steps take their own path
    assert scalar_event(tag, value, small, wall_time) == _protobuf(tag, value, small, wall_time)


@given(data=st.binary(max_size=2000))
def test_a_record_is_framed_as_tensorboard_frames_it(data):
    header = len(data).to_bytes(8, "little")
    crc = masked_crc32c(header).to_bytes(4, "little")
    assert record(data) == header + crc + data + masked_crc32c(data).to_bytes(4, "little")


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
