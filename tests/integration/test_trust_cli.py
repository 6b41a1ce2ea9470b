"""Coach's trust model on the command line: no file the ``coach`` command reads makes it
import a module or run a preset file the user did not name (docs/security.md).

Each case names an "environment" ``trust_marker_env:Marked`` that writes a marker file when
it is made (and a preset file that writes one when it runs). From a file, Coach refuses it in
one line that names the module (or file) and ``--allow-import``, and the marker is never
written; given ``--allow-import``, the same command runs. The paths: a YAML preset, a run's
params.yaml given to ``-p``, ``--resume``, ``coach export``, a group's group.yaml, a study's
tune.yaml and search space, and ``coach plot``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from tests.integration.coach_cli import ENV, TINY, coach, experiment, overriding, rewards
from tests.unit.test_trust import MARKER_ENV, MARKER_PRESET

LEVEL = "trust_marker_env:Marked"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with the marker module on the commands' path, and the marker preset."""
    (tmp_path / "trust_marker_env.py").write_text(MARKER_ENV)
    (tmp_path / "marker_preset.py").write_text(MARKER_PRESET)
    path = os.pathsep.join([str(tmp_path), ENV.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    monkeypatch.setitem(ENV, "PYTHONPATH", path)
    return tmp_path


def _marked_run(folder: Path) -> Path:
    """A run made with the marker environment given on the command line (trusted), its
    marker then removed: the run folder someone hands over (with an evaluation to plot)."""
    marker = folder / "made"
    one_episode = ["-cp", "schedule.evaluation_steps=EnvironmentEpisodes(1)"]
    result = coach(
        "-p", "CartPole_DQN", "-ep", "exp", "-q", *overriding(TINY, one_episode),
        "-cp", f"environment.level={LEVEL}",
        "-cp", f"environment.kwargs={{'marker': '{marker}'}}",
        cwd=folder,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert marker.exists()
    marker.unlink()
    return experiment(folder / "exp")


def _assert_refused(result: object, names: str, folder: Path) -> None:
    stderr = getattr(result, "stderr", "")
    assert getattr(result, "returncode", None) == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("coach: error: "), stderr
    assert f"--allow-import {names}" in lines[0], lines[0]
    assert not (folder / "made").exists() and not (folder / "preset_ran").exists()


def test_a_yaml_preset_cannot_make_coach_call_os_system(folder: Path) -> None:
    pwned = folder / "pwned"
    (folder / "run.yaml").write_text(
        yaml.safe_dump(
            {
                "preset": "CartPole_DQN",
                "parameters": {
                    "environment.level": "os:system",
                    "environment.kwargs": {"command": f"touch {pwned}"},
                },
            }
        )
    )
    result = coach("-p", "run.yaml", "-ep", "exp", *TINY, cwd=folder)
    _assert_refused(result, "os", folder)
    assert "environment.level" in result.stderr
    assert not pwned.exists() and not (folder / "exp").exists()


def test_a_yaml_preset_names_a_module_only_when_allowed(folder: Path) -> None:
    marker = folder / "made"
    (folder / "run.yaml").write_text(
        yaml.safe_dump(
            {
                "preset": "CartPole_DQN",
                "parameters": {
                    "environment.level": LEVEL,
                    "environment.kwargs": {"marker": str(marker)},
                },
            }
        )
    )
    _assert_refused(
        coach("-p", "run.yaml", "-ep", "exp", *TINY, cwd=folder), "trust_marker_env", folder
    )
    assert not (folder / "exp").exists()
    allowed = coach(
        "-p", "run.yaml", "-ep", "exp", "-q", "--allow-import", "trust_marker_env", *TINY,
        cwd=folder,
    )  # fmt: skip
    assert allowed.returncode == 0, allowed.stderr
    assert marker.exists()


def test_a_yaml_preset_runs_a_base_preset_file_only_when_allowed(folder: Path) -> None:
    (folder / "run.yaml").write_text(yaml.safe_dump({"preset": "marker_preset.py"}))
    preset = folder / "marker_preset.py"
    _assert_refused(coach("-p", "run.yaml", "-ep", "exp", *TINY, cwd=folder), str(preset), folder)
    allowed = coach(
        "-p", "run.yaml", "-ep", "exp", "-q", "--allow-import", "marker_preset.py", *TINY,
        cwd=folder,
    )  # fmt: skip
    assert allowed.returncode == 0, allowed.stderr
    assert (folder / "preset_ran").exists()


def test_a_runs_params_yaml_resume_and_export_hold_the_rule(folder: Path) -> None:
    """The four paths of a run folder handed over: -p params.yaml, --resume, export; each
    refused, then each run with --allow-import, params.yaml repeating the run exactly."""
    run = _marked_run(folder)
    params = run / "params.yaml"
    allow = ["--allow-import", "trust_marker_env"]
    for args in (
        ["-p", str(params), "-ep", "again", *TINY],
        ["--resume", str(run), "-cp", "schedule.improve_steps=EnvironmentSteps(2)"],
        ["export", "-crd", str(run), "-o", str(folder / "policy.onnx")],
    ):
        before = sorted(p.name for p in run.rglob("*"))
        _assert_refused(coach(*args, cwd=folder), "trust_marker_env", folder)
        assert sorted(p.name for p in run.rglob("*")) == before  # nothing lost, nothing added
        assert not (folder / "again").exists() and not (folder / "policy.onnx").exists()
    repeated = coach("-p", str(params), "-ep", "again", "-q", *allow, cwd=folder)
    assert repeated.returncode == 0, repeated.stderr
    again = experiment(folder / "again")
    assert rewards(again) == rewards(run)
    (folder / "made").unlink()
    resumed = coach(
        "--resume", str(run), "-q", *allow, "-cp", "schedule.improve_steps=EnvironmentSteps(2)",
        cwd=folder,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    exported = coach(
        "export", "-crd", str(run), "-o", str(folder / "policy.onnx"), *allow, cwd=folder
    )
    assert exported.returncode == 0, exported.stderr
    assert (folder / "policy.onnx").is_file()


def test_a_groups_file_holds_the_rule_and_cannot_allow_itself(folder: Path) -> None:
    result = coach(
        "-p", "CartPole_DQN", "--seeds", "0-1", "-j", "1", "-ep", "exp", "-q", *TINY, cwd=folder
    )
    assert result.returncode == 0, result.stderr
    group = experiment(folder / "exp")
    document = yaml.safe_load((group / "group.yaml").read_text())
    document["seed_status"] = {0: "done", 1: "waiting"}
    document["options"]["custom_parameters"] += [
        f"environment.level={LEVEL}",
        f"environment.kwargs={{'marker': '{folder / 'made'}'}}",
    ]
    (group / "group.yaml").write_text(yaml.safe_dump(document))
    _assert_refused(coach("--resume", str(group), "-q", cwd=folder), "trust_marker_env", folder)
    document["options"]["allow_import"] = ["trust_marker_env"]  # a file granting itself leave
    (group / "group.yaml").write_text(yaml.safe_dump(document))
    sneaked = coach("--resume", str(group), "-q", cwd=folder)
    assert sneaked.returncode == 2 and "options it never holds: allow_import" in sneaked.stderr
    assert not (folder / "made").exists()


def test_a_studys_search_space_and_settings_hold_the_rule(folder: Path) -> None:
    pytest.importorskip("optuna")
    space = folder / "space.yaml"
    space.write_text(
        yaml.safe_dump(
            {"parameters": {"environment.level": {"categorical": ["CartPole-v1", "os:system"]}}}
        )
    )
    result = coach(
        "tune", "-p", "CartPole_DQN", "--space", str(space), "--trials", "1", "-ep", "exp", *TINY,
        cwd=folder,
    )  # fmt: skip
    _assert_refused(result, "os", folder)
    assert str(space) in result.stderr and not (folder / "exp").exists()


def test_coach_plot_runs_no_preset_file_a_params_yaml_names(folder: Path) -> None:
    run = _marked_run(folder)
    params = run / "params.yaml"
    document = yaml.safe_load(params.read_text())
    document["preset"] = str(folder / "marker_preset.py")
    document["name"] = "CartPole_DQN"
    params.write_text(yaml.safe_dump(document))
    result = coach("plot", str(run), "-o", str(folder / "plots"), cwd=folder)
    assert result.returncode == 0, result.stderr
    assert "--allow-import" in result.stderr and "threshold is not drawn" in result.stderr
    assert not (folder / "preset_ran").exists() and (folder / "plots" / "report.html").is_file()
