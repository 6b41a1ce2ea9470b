"""coach/dataset_ids.py on a scratch Minari root: new ids get a version and are refused when
taken or invalid, an id without version names its newest local dataset, and an unknown id's
error names the root. (Through writing and loading real datasets: test_datasets.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from coach.batch.ids import check_new_dataset, local_dataset, unknown_id
from coach.errors import CoachError


@pytest.fixture()
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path))
    for version in ("v0", "v2", "v10"):
        (tmp_path / "cartpole" / f"random-{version}" / "data").mkdir(parents=True)
    (tmp_path / "cartpole" / "random-v11").mkdir()  # no data/: not a dataset
    return tmp_path


def test_a_new_id_gets_its_version_and_a_taken_or_invalid_one_is_refused(root: Path) -> None:
    assert check_new_dataset("cartpole/expert") == "cartpole/expert-v0"
    assert check_new_dataset("cartpole/random-v3") == "cartpole/random-v3"
    with pytest.raises(CoachError, match="'cartpole/random-v0' already exists"):
        check_new_dataset("cartpole/random")
    with pytest.raises(CoachError, match="is not a Minari dataset id"):
        check_new_dataset("../escape")


def test_an_id_without_version_names_the_newest_local_dataset(root: Path) -> None:
    assert local_dataset("cartpole/random") == root / "cartpole" / "random-v10"
    assert local_dataset("cartpole/random-v2") == root / "cartpole" / "random-v2"
    assert local_dataset("cartpole/random-v11") is None
    assert local_dataset("acrobot/random") is None


def test_an_unknown_id_names_the_root(root: Path) -> None:
    message = str(unknown_id("pendulum/expert"))
    assert "no local Minari dataset 'pendulum/expert'" in message and str(root) in message
    assert "minari download ID" in message
