"""A study reads real runs back: two seeds of a CartPole_DQN run by the ``coach`` command,
found from the experiments folder, put on a common grid and banded across seeds; and one of
CartPole_DDQN beside them."""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from coach.errors import CoachError
from coach.studies.figures import curve_figure, save
from coach.studies.runs import find_runs, on_grid, read_run
from coach.studies.statistics import curve_band
from tests.integration.coach_cli import coach

# The study's runs are made once per test process (`study_experiments`); grouped on one
# worker by `make test`'s --dist loadgroup, they are made once in all.
pytestmark = pytest.mark.xdist_group("study")


@pytest.fixture
def experiments(study_experiments: Path) -> Path:
    """Two seeds of CartPole_DQN and one of CartPole_DDQN (`tests.integration.conftest`)."""
    return study_experiments


def test_every_run_under_a_folder_is_found_with_its_preset_seed_and_evaluations(
    experiments: Path,
) -> None:
    runs = find_runs([experiments])
    assert [(r.preset, r.seed) for r in runs] == [
        ("CartPole_DDQN", 1),
        ("CartPole_DQN", 1),
        ("CartPole_DQN", 2),
    ]
    assert {r.environment for r in runs} == {"CartPole-v1"}
    runs = runs[1:]  # the DQN's
    for run in runs:
        with open(run.path / "progress.csv", newline="") as f:
            rows = [r for r in csv.DictReader(f) if r["phase"] == "evaluate"]
        assert run.env_steps.tolist() == [float(r["env_steps"]) for r in rows]
        assert run.reward.tolist() == [float(r["reward"]) for r in rows]
        assert len(run.env_steps) == 2 and run.success_rate is None  # 1,200 steps, 600 apart
    # a run folder itself, or the same run twice, is one run
    one = find_runs([runs[0].path, runs[0].path.parent])
    assert [r.path for r in one] == [runs[0].path]


def test_runs_on_a_common_grid_give_the_band_across_seeds(experiments: Path) -> None:
    runs = find_runs([experiments])[1:]  # the DQN's two seeds
    steps, values = on_grid(runs, points=5)
    assert steps[0] == max(r.env_steps[0] for r in runs)
    assert steps[-1] == min(r.env_steps[-1] for r in runs)
    for run, row in zip(runs, values, strict=True):  # the evaluations themselves at the ends
        assert row[0] == pytest.approx(np.interp(steps[0], run.env_steps, run.reward))
        assert row[-1] == pytest.approx(run.reward[-1])
    seconds, by_time = on_grid(runs, x="wall_time")  # evaluations matched one to one
    np.testing.assert_allclose(seconds, np.mean([r.wall_time for r in runs], axis=0))
    np.testing.assert_array_equal(by_time, [r.reward for r in runs])
    mean, low, high = curve_band(values)
    np.testing.assert_allclose(mean, values.mean(axis=0))
    assert (low <= mean).all() and (mean <= high).all()


def test_a_figure_of_the_runs_is_written_as_png_and_svg(experiments: Path, tmp_path: Path) -> None:
    import struct

    runs = find_runs([experiments])[1:]
    curves = {"CartPole_DQN": on_grid(runs), "first seed twice": on_grid([runs[0], runs[0]])}
    figure = curve_figure(curves, "CartPole-v1", threshold=475.0)
    png, svg = save(figure, tmp_path / "figures" / "CartPole-v1")
    header = png.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", header[16:24]) == (1050, 675)  # 7 x 4.5 inches at 150 dpi
    text = svg.read_text()
    for label in ("CartPole_DQN (2 runs)", "first seed twice (2 runs)", "threshold", "env steps"):
        assert label in text
    lines = figure.axes[0].get_lines()
    np.testing.assert_allclose(lines[0].get_ydata(), curves["CartPole_DQN"][1].mean(axis=0))


def test_coach_plot_draws_two_presets_on_one_figure(experiments: Path, tmp_path: Path) -> None:
    done = coach("plot", str(experiments), "-o", "figures", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        str(Path("figures") / "CartPole-v1.png"),
        str(Path("figures") / "CartPole-v1.svg"),
        str(Path("figures") / "final_performance.csv"),
        str(Path("figures") / "final_performance.png"),
        str(Path("figures") / "final_performance.svg"),
        str(Path("figures") / "report.html"),
    ]
    aggregates = (tmp_path / "figures" / "final_performance.svg").read_text()
    for label in ("CartPole_DQN", "CartPole_DDQN", "IQM", "optimality gap"):
        assert label in aggregates
    with open(tmp_path / "figures" / "final_performance.csv", newline="") as f:
        table = {row["preset"]: row for row in csv.DictReader(f)}
    dqn = find_runs([experiments])[1:]
    finals = np.array([run.reward[-1] for run in dqn]) / 475.0  # normalised final scores
    row = table["CartPole_DQN"]
    assert row["runs"] == "2" and float(row["threshold"]) == 475.0
    iqm = scipy.stats.trim_mean(finals, 0.25)
    assert float(row["IQM"]) == pytest.approx(iqm)
    assert float(row["IQM low"]) <= iqm <= float(row["IQM high"])
    assert float(row["optimality gap"]) == pytest.approx(np.mean(np.maximum(1 - finals, 0)))
    assert table["CartPole_DDQN"]["runs"] == "1"
    text = (tmp_path / "figures" / "CartPole-v1.svg").read_text()
    for label in ("CartPole_DQN (2 runs)", "CartPole_DDQN (1 run)", "threshold"):
        assert label in text  # one figure, a legend entry each, CartPole's 475 drawn
    done = coach("plot", str(experiments), "-x", "wall_time", "-o", "clock", cwd=tmp_path)
    assert (
        done.returncode == 0 and "wall time" in (tmp_path / "clock" / "CartPole-v1.svg").read_text()
    )
    for args in (["plot", str(tmp_path / "nope")], ["-p", "CartPole_DQN", "plot", "x"], ["plot"]):
        refused = coach(*args, cwd=tmp_path)
        assert refused.returncode == 2 and len(refused.stderr.splitlines()) == 1
        assert refused.stderr.startswith("coach: error: ")


def test_paths_without_runs_are_refused_in_one_line(experiments: Path, tmp_path: Path) -> None:
    with pytest.raises(CoachError, match="does not exist"):
        find_runs([tmp_path / "nothing"])
    with pytest.raises(CoachError, match="holds no run"):
        find_runs([tmp_path])
    (tmp_path / "progress.csv").write_text("wall_time,phase\n")
    with pytest.raises(CoachError, match=r"not a readable run: params\.yaml"):
        read_run(tmp_path)
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{b}: &{b} [*{a}, *{a}, *{a}, *{a}, *{a}, *{a}, *{a}, *{a}, *{a}, *{a}]\n"
        for a, b in zip("abcdefgh", "bcdefghi", strict=True)
    )  # a billion values from a few hundred bytes
    for text, why in [
        ("preset: [unclosed\nseed: 0\n", r"params\.yaml:2:5: not valid YAML"),
        ("!!python/object/apply:os.system [echo hi]\n", "is not allowed"),
        (bomb, "values"),
        ("- a list\n", "not a mapping"),
        ("preset: CartPole_DQN\n", "records no preset and integer seed"),
        ("preset: CartPole_DQN\nseed: 0\nparameters: [1]\n", "not a mapping"),
    ]:
        (tmp_path / "params.yaml").write_text(text)
        with pytest.raises(CoachError, match=why) as refused:
            read_run(tmp_path)
        assert "\n" not in str(refused.value)  # the study's one line
    with pytest.raises(CoachError, match="no runs"):
        on_grid([])
    with pytest.raises(CoachError, match="no evaluation success_rate"):
        on_grid(find_runs([experiments]), metric="success_rate")
    early, late = find_runs([experiments])[1:]
    late = replace(late, env_steps=late.env_steps + early.env_steps[-1] + 1)
    with pytest.raises(CoachError, match="share no stretch"):
        on_grid([early, late])
