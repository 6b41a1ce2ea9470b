"""The documentation's benchmark records: a preset's kept runs drawn through ``coach plot``'s
code into a figure, and their figures per seed into ``results.json``."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import shutil
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

from benchmarks.learning_curves import (
    RECORDED,
    RECORDS,
    commit,
    floors,
    keep,
    metric,
    record,
    restore,
)
from coach.errors import CoachError
from coach.experiment import write_params
from coach.presets import PresetValidation, load_preset, presets_dir
from tests.docs.blocks import ROOT
from tests.integration.coach_cli import SMALL, coach
from tests.learning.golden_case import MARKS, RESULT, GoldenResult, run_case


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """Two short CartPole_DQN runs by the CLI, seeds 0 and 1, for the tests to copy."""
    cwd = tmp_path_factory.mktemp("made")
    folders = {}
    for seed in (0, 1):
        done = coach("-p", "CartPole_DQN", "--seed", str(seed), "-e", str(seed), *SMALL, cwd=cwd)
        assert done.returncode == 0, done.stderr
        (folders[seed],) = list((cwd / "experiments" / str(seed)).iterdir())
    return folders


@pytest.mark.parametrize("as_file", [False, True], ids=["shipped", "preset-file"])
def test_a_preset_whose_seeds_finished_is_drawn_and_recorded(
    tmp_path: Path, made: dict[int, Path], as_file: bool
) -> None:
    runs, docs = tmp_path / "runs", tmp_path / "docs"
    name, key = "CartPole_DQN", "CartPole_DQN"
    if as_file:  # named by its path, kept and recorded under its stem as golden keeps it
        key = "My_CartPole"
        name = str(tmp_path / f"{key}.py")
        shutil.copyfile(presets_dir() / "CartPole_DQN.py", name)
    results = []
    for seed in (0, 1):
        folder = runs / key / f"seed{seed}"
        shutil.copytree(made[seed], folder)
        result = GoldenResult(name, seed, "475", None, None, 9.5, 9.0, 8.5, False, "no")
        (folder / RESULT).write_text(json.dumps(asdict(result)))
        (folder / MARKS).write_text(json.dumps([[True, 1.5], [True, 2.5 + seed]]))
        results.append(result)
    threads = 2 if as_file else 1  # the command names a case's threads when not one
    args = argparse.Namespace(runs=runs, docs=docs, seeds=[0, 1], jobs=1, threads=threads)
    record(name, results, args)
    figure = docs / "figures" / f"{key}.png"
    assert figure.read_bytes().startswith(b"\x89PNG")
    entry = json.loads((docs / "results.json").read_text())[key]
    assert entry["figure"] == f"figures/{key}.png" and entry["metric"] == "reward"
    assert [s["seed"] for s in entry["seeds"]] == [0, 1]
    assert entry["seeds"][1]["best_checkpoint"] == 9.0
    threads_flag = " --threads 2" if as_file else ""
    assert entry["command"].endswith(f"{name} --seeds 0 1{threads_flag}")
    assert [s["total_seconds"] for s in entry["seeds"]] == [2.5, 3.5]
    assert metric("ExplorationChain_DQN") == "success_rate"


def test_a_relative_promise_is_drawn_at_the_mean_of_its_seeds_floors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.learning import baselines

    def resolve(name: str, validation: PresetValidation, seed: int) -> tuple[object, str]:
        assert validation.gap_closed is not None  # asked only of a relative promise
        return dataclasses.replace(validation, min_reward=-70.0 - 2 * seed), ""

    monkeypatch.setattr(baselines, "resolve", resolve)
    spread = floors("SimpleSpread_SharedPPO", [0, 1, 2])  # floors -70, -72 and -74
    assert spread == {"SimpleSpread_SharedPPO": pytest.approx(-72.0)}
    assert floors("CartPole_DQN", [0, 1, 2]) == {}  # a threshold of its own


def test_a_recorded_case_is_read_back_and_drawn_with_nothing_kept_in_runs(
    tmp_path: Path, made: dict[int, Path]
) -> None:
    """A preset's seeds finished elsewhere: the command draws it from its committed records
    (`keep`) without training, and ``coach plot`` reads a record as it reads a run."""
    docs = tmp_path / "docs"
    for seed in (0, 1):
        folder = tmp_path / "elsewhere" / "CartPole_DQN" / f"seed{seed}"
        shutil.copytree(made[seed], folder)
        # Golden trains a preset as it is: its record has the preset's own parameters.
        write_params(folder / "params.yaml", load_preset("CartPole_DQN"), seed, [])
        result = GoldenResult("CartPole_DQN", seed, "475", None, None, 9.5, 9.0, 8.5, False, "no")
        (folder / RESULT).write_text(json.dumps(asdict(result)))
        (folder / MARKS).write_text(json.dumps([[True, 1.5], [True, 2.5 + seed]]))
        keep("CartPole_DQN", folder, docs / RECORDS / "CartPole_DQN" / f"seed{seed}")
    kept = docs / RECORDS / "CartPole_DQN" / "seed1"
    with open(kept / "progress.csv", newline="") as f:
        phases = {row["phase"] for row in csv.DictReader(f)}
    assert phases == {"evaluate"}
    assert json.loads((kept / RECORDED).read_text())["commit"] == commit()
    runs = tmp_path / "runs"  # nothing in it: a new machine
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.learning_curves", "CartPole_DQN", "--seeds", "0",
         "1", "--jobs", "1", "--runs", str(runs), "--docs", str(docs)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "CartPole_DQN seed 1: threshold reached at never" in done.stdout
    assert (docs / "figures" / "CartPole_DQN.png").read_bytes().startswith(b"\x89PNG")
    entry = json.loads((docs / "results.json").read_text())["CartPole_DQN"]
    assert [s["total_seconds"] for s in entry["seeds"]] == [2.5, 3.5]
    assert entry["commit"] == commit()
    assert not list(runs.rglob("*.pt")), "a recorded case was trained again"
    plotted = coach("plot", str(docs / RECORDS / "CartPole_DQN"), "-o", "plots", cwd=tmp_path)
    assert plotted.returncode == 0, plotted.stderr
    assert list((tmp_path / "plots").glob("*.png"))


def test_a_case_recorded_with_other_parameters_than_the_presets_is_not_read_back(
    tmp_path: Path, made: dict[int, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A preset edited since its case was recorded: the record is trained again, not read
    back for the preset as it is now, and a finished case kept in ``--runs`` is refused."""
    folder = tmp_path / "elsewhere" / "seed0"
    shutil.copytree(made[0], folder)  # trained with SMALL's budgets, not the preset's
    result = GoldenResult("CartPole_DQN", 0, "475", None, None, 9.5, 9.0, 8.5, False, "no")
    (folder / RESULT).write_text(json.dumps(asdict(result)))
    kept = tmp_path / "docs" / RECORDS / "CartPole_DQN" / "seed0"
    keep("CartPole_DQN", folder, kept)
    runs = tmp_path / "runs" / "CartPole_DQN" / "seed0"
    restore("CartPole_DQN", kept, runs)
    assert not runs.exists()
    line = capsys.readouterr().out.strip()
    assert line.startswith("CartPole_DQN seed0: recorded with other parameters")
    assert "schedule.evaluation_steps 'EnvironmentEpisodes(3)' -> 'EnvironmentEpisodes(10)'" in line
    assert line.endswith(": trained again")
    with pytest.raises(CoachError, match=r"judged with other parameters .*remove the folder"):
        run_case("CartPole_DQN", 0, folder=folder)
    # A parameter added since the record was made (at the value that keeps what it ran) is
    # not a change: the record of the preset's own parameters, less one, is read back.
    write_params(kept / "params.yaml", load_preset("CartPole_DQN"), 0, [])
    text = (kept / "params.yaml").read_text()
    dropped = [line for line in text.splitlines() if "learning_rate_clock:" not in line]
    (kept / "params.yaml").write_text("\n".join(dropped) + "\n")
    restore("CartPole_DQN", kept, runs)
    assert json.loads((runs / RESULT).read_text())["final"] == 8.5
    # Trained again, the case is recorded anew: the record says when and from which commit.
    (kept / RECORDED).write_text(json.dumps({"commit": "0000000", "date": "2000-01-01"}))
    again = dataclasses.replace(result, final=9.25)
    (folder / RESULT).write_text(json.dumps(asdict(again)))
    keep("CartPole_DQN", folder, kept)
    assert json.loads((kept / RECORDED).read_text())["commit"] == commit()
    assert json.loads((kept / RESULT).read_text())["final"] == 9.25
