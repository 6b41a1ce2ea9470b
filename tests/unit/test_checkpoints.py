"""Checkpoint files: weights-only round trips, atomic writes, the latest marker, refusals."""

from __future__ import annotations

import errno
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from coach.checkpoints import (
    CheckpointSchedule,
    find_checkpoint,
    load_checkpoint,
    pack,
    save_best,
    save_checkpoint,
    unpack,
)
from coach.errors import CoachError
from coach.experiment import WriteFailed

STATE = {
    "array": np.arange(6, dtype=np.float32).reshape(2, 3),
    "flags": np.array([True, False]),
    "scalar": np.float64(2.5),
    "rng": np.random.default_rng(3).bit_generator.state,
    "tensor": torch.ones(2),
    "nested": [{"x": np.int64(4)}, (1, None, "text")],
}


def test_round_trip_through_a_weights_only_load(tmp_path: Path) -> None:
    path = save_checkpoint(tmp_path, STATE, env_steps=100)
    assert path.name == "checkpoint_100.pt"
    raw = torch.load(path, weights_only=True)  # no pickled objects needed
    assert raw["format"] == 1
    state = load_checkpoint(tmp_path)
    np.testing.assert_array_equal(state["array"], STATE["array"])
    assert state["array"].dtype == np.float32 and state["flags"].dtype == np.bool_
    assert state["scalar"] == 2.5 and state["rng"] == STATE["rng"]
    assert torch.equal(state["tensor"], STATE["tensor"])
    assert state["nested"] == [{"x": 4}, (1, None, "text")]
    assert state["path"] == str(path)


def test_pack_shares_what_it_can_and_copies_the_rest() -> None:
    # A state is packed as it is saved: a full Atari replay's frames (about 7 GB) are not
    # copied. A read-only or strided array is copied (a tensor wants writable memory).
    array = np.zeros((4, 3))
    readonly = np.zeros(3)
    readonly.flags.writeable = False
    packed = pack({"a": array, "rows": array[1:3], "column": array[:, 1], "readonly": readonly})
    array[1, 1] = 7.0
    assert float(packed["a"]["__ndarray__"][1, 1]) == 7.0
    assert float(packed["rows"]["__ndarray__"][0, 1]) == 7.0
    assert float(packed["column"]["__ndarray__"][1]) == 0.0
    assert unpack(packed)["readonly"].tolist() == [0.0, 0.0, 0.0]


def _anonymous_memory() -> int:
    """This process's resident memory that no file backs, in bytes (Linux)."""
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"RssAnon:\s+(\d+) kB", status).group(1)) * 1024  # type: ignore[union-attr]


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads /proc (Linux)")
def test_a_loaded_checkpoint_is_the_files_pages_until_copied(tmp_path: Path) -> None:
    # Restoring a full Atari replay (about 7 GB) must not hold it twice: the loaded arrays
    # are the file's pages, and only their copy into the memory takes memory of its own.
    size = 256 * 2**20
    save_checkpoint(tmp_path, {"frames": np.full(size, 7, dtype=np.uint8)}, 1)
    before = _anonymous_memory()
    frames = load_checkpoint(tmp_path)["frames"]
    assert int(frames[::4096].sum()) == 7 * (size // 4096)  # every page read
    assert _anonymous_memory() - before < size // 4
    frames[0] = 1  # and it is the run's to change, not the file's
    assert load_checkpoint(tmp_path)["frames"][0] == 7


def test_latest_marker_names_the_newest_and_old_ones_go(tmp_path: Path) -> None:
    for steps in (10, 20, 30, 40):
        save_checkpoint(tmp_path, {"steps": steps}, steps, keep=2)
    assert sorted(p.name for p in tmp_path.glob("checkpoint_*.pt")) == [
        "checkpoint_30.pt",
        "checkpoint_40.pt",
    ]
    assert (tmp_path / "latest").read_text().strip() == "checkpoint_40.pt"
    assert load_checkpoint(tmp_path)["steps"] == 40
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary file left behind


def test_best_is_replaced_in_place_and_outside_the_rotation(tmp_path: Path) -> None:
    save_best(tmp_path, {"steps": 10})
    for steps in (10, 20, 30):
        save_checkpoint(tmp_path, {"steps": steps}, steps, keep=1)
    best = save_best(tmp_path, {"steps": 25})
    assert best == tmp_path / "best.pt" and load_checkpoint(best)["steps"] == 25
    assert sorted(p.name for p in tmp_path.glob("*.pt")) == ["best.pt", "checkpoint_30.pt"]
    assert load_checkpoint(tmp_path)["steps"] == 30  # the latest marker is left alone
    assert not list(tmp_path.glob(".*.tmp"))


def test_find_takes_the_newest_run_of_an_experiment_name(tmp_path: Path) -> None:
    older = save_checkpoint(tmp_path / "2026-01-02_10-00-00" / "checkpoints", {}, 5)
    newer = save_checkpoint(tmp_path / "2026-01-02_10-00-09" / "checkpoints", {}, 7)
    (tmp_path / "2026-01-02_10-00-30" / "checkpoints").mkdir(parents=True)  # none written yet
    assert find_checkpoint(tmp_path) == newer
    assert find_checkpoint(older.parent.parent) == older


def test_find_accepts_experiment_folder_checkpoints_folder_or_file(tmp_path: Path) -> None:
    path = save_checkpoint(tmp_path / "checkpoints", {}, 5)
    assert find_checkpoint(tmp_path) == path
    assert find_checkpoint(tmp_path / "checkpoints") == path
    assert find_checkpoint(path) == path


def test_refusals_name_the_path(tmp_path: Path) -> None:
    with pytest.raises(CoachError, match="no checkpoint folder"):
        find_checkpoint(tmp_path / "missing")
    with pytest.raises(CoachError, match="no 'latest' marker"):
        find_checkpoint(tmp_path)
    path = save_checkpoint(tmp_path, {"a": np.zeros(1000)}, 1)
    path.write_bytes(path.read_bytes()[:300])
    with pytest.raises(CoachError, match=re.escape(f"checkpoint {path} is corrupted")):
        load_checkpoint(tmp_path)
    path.write_text("preset: CartPole_DQN\n")  # another kind of file: a line of error
    with pytest.raises(CoachError, match=re.escape(f"checkpoint {path} is corrupted")) as error:
        load_checkpoint(path)
    assert "\n" not in str(error.value)
    assert "weights_only" not in str(error.value)  # torch's advice, for files one trusts
    torch.save({"something": "else"}, path)
    with pytest.raises(CoachError, match="not a Coach checkpoint"):
        load_checkpoint(path)
    (tmp_path / "latest").write_text("checkpoint_9.pt\n")
    with pytest.raises(CoachError, match=r"checkpoint_9\.pt, which is missing"):
        load_checkpoint(tmp_path)


def test_a_write_the_disk_refuses_leaves_the_last_checkpoint_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    save_checkpoint(tmp_path, {"steps": 10}, 10)
    save_best(tmp_path, {"steps": 10})
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def full_disk(obj: object, f: Any) -> None:
        f.write(b"half a checkpoint")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(torch, "save", full_disk)
    with pytest.raises(WriteFailed) as error:
        save_checkpoint(tmp_path, {"steps": 20}, 20)
    assert str(error.value) == (
        f"could not write {tmp_path / 'checkpoint_20.pt'}: the disk is full; its latest "
        f"checkpoint, {tmp_path / 'checkpoint_10.pt'}, is intact (coach --resume "
        f"{tmp_path.parent} goes on from it)"
    )
    with pytest.raises(WriteFailed, match=r"best\.pt: the disk is full; the best\.pt before"):
        save_best(tmp_path, {"steps": 20})
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    monkeypatch.undo()
    assert load_checkpoint(tmp_path)["steps"] == 10


def test_an_error_of_the_state_itself_is_raised_as_it_is(tmp_path: Path) -> None:
    """Only the disk's refusals are a user's to mend; a state that cannot be saved (an
    error of Coach) keeps its own error, and leaves no temporary file either."""
    with pytest.raises(AttributeError):
        save_checkpoint(tmp_path, {"unpicklable": lambda: None}, 10)
    assert list(tmp_path.iterdir()) == []


class Crafted:
    """An object no checkpoint holds."""


def test_a_file_of_pickled_objects_is_refused_without_torchs_advice(tmp_path: Path) -> None:
    path = tmp_path / "crafted.pt"
    torch.save({"format": 1, "agents": [Crafted()]}, path)
    with pytest.raises(CoachError) as error:
        load_checkpoint(path)
    message = str(error.value)
    assert message == (
        f"{path} holds pickled objects ({__name__}.Crafted) that a Coach checkpoint never "
        f"holds: Coach will not load it, since unpickling them could run any code"
    )
    assert "weights_only" not in message and "trust" not in message


def test_schedule_by_env_steps() -> None:
    schedule = CheckpointSchedule(None, 100, start_steps=250)
    assert schedule.enabled
    assert not schedule.due(299) and schedule.due(300)
    schedule.saved(305)
    assert not schedule.due(399) and schedule.due(400)
    assert not CheckpointSchedule(None, None).enabled
