"""``coach export`` through the real command: runs of DQN, Clipped PPO (discrete and
continuous), SAC and NAF, trained briefly with their observations normalized, exported as
ONNX and TorchScript; on 1,000 observations the files' actions are Coach's own greedy
evaluation actions (the agent restored as ``coach --evaluate -crd`` restores it), exactly
for discrete actions and within 1e-5 for continuous ones, and so on batches of 1, 3 and 7
(the batch axis is dynamic). The ONNX policy of SAC runs in a process that imports
onnxruntime and numpy alone (the snippet of docs/studies.md and
`examples/run_onnx_policy.py`); what cannot be exported is refused in one line."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime
import pytest
import torch

from coach.checkpoints import load_checkpoint
from coach.core.run_phase import RunPhase
from coach.errors import CoachError
from coach.experiment import write_params
from coach.export.files import export_run
from coach.graph_managers.parameters import RunContext
from coach.presets import load_preset, load_run_preset
from tests.docs.test_examples import _block
from tests.integration.coach_cli import ENV, coach, experiment

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "run_onnx_policy.py"

NORMALIZED = """
from coach import InputFilter
from coach.filters.observation import ObservationNormalizationFilter
from coach_presets.{base} import graph_manager

graph_manager.agent_params.input_filter = InputFilter(
    observation_filters={{"observation": [ObservationNormalizationFilter(clip=5.0)]}}
)
"""
"""A shipped preset with its observations normalized: the statistics the export folds in."""


def _steps(name: str, steps: int) -> list[str]:
    return ["-cp", f"schedule.{name}=EnvironmentSteps({steps})"]


NO_EVALUATION = _steps("steps_between_evaluation_periods", 100_000)  # the run's end: a checkpoint
BUDGETS = {
    "CartPole_DQN": [
        *_steps("heatup_steps", 300), *_steps("improve_steps", 600), *NO_EVALUATION,
        "-cp", "agent.algorithm.num_consecutive_playing_steps=EnvironmentSteps(64)",
        "-cp", "agent.algorithm.num_consecutive_training_steps=16",
    ],
    "CartPole_ClippedPPO": [*_steps("improve_steps", 512), *NO_EVALUATION],  # 2 blocks
    "Pendulum_ClippedPPO": [
        *_steps("improve_steps", 512), *NO_EVALUATION,
        "-cp", "agent.memory.rollout_length=64",  # 2 blocks of 64 x 4
    ],
    "Pendulum_SAC": [*_steps("heatup_steps", 100), *_steps("improve_steps", 100), *NO_EVALUATION],
    "Pendulum_NAF": [*_steps("heatup_steps", 100), *_steps("improve_steps", 300), *NO_EVALUATION],
}  # fmt: skip
"""Short runs: a few dozen to a few hundred gradient steps each."""
CONTINUOUS = {"Pendulum_ClippedPPO", "Pendulum_SAC", "Pendulum_NAF"}


@dataclass(slots=True)
class Run:
    preset: Path
    """The preset file the run was made from (not found by name: given with -p)."""
    folder: Path
    files: dict[str, Path]
    """The exported files by format."""


# The runs are made once, on one worker when the suite runs in parallel.
SHARED = pytest.mark.xdist_group("export")
# torch 2.13 marks TorchScript deprecated; torch.jit.load still loads what it wrote.
JIT_LOAD = pytest.mark.filterwarnings("ignore:`torch.jit.load` is deprecated:DeprecationWarning")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    """Every preset trained briefly and exported in both formats, through the command."""
    root = tmp_path_factory.mktemp("export")
    made = {}
    for base, budget in BUDGETS.items():
        preset = root / f"{base}_normalized.py"
        preset.write_text(NORMALIZED.format(base=base))
        trained = coach("-p", str(preset), "-q", "-ep", str(root), *budget, cwd=root)
        assert trained.returncode == 0, trained.stderr
        folder = experiment(root, preset.stem)
        # ONNX where it goes by default (the run's export/ folder), from the run's folder;
        # TorchScript to a file named, from the experiment's folder (its newest run).
        onnx = coach("export", "-crd", str(folder), "-p", str(preset), cwd=root)
        assert onnx.returncode == 0 and not onnx.stderr, onnx.stderr
        assert onnx.stdout.strip() == str(folder / "export" / "policy.onnx")
        script = root / f"{base}.pt"
        ts = coach(
            "export", "-crd", str(folder.parent), "-p", str(preset),
            "--format", "torchscript", "-o", str(script), cwd=root,
        )  # fmt: skip
        assert ts.returncode == 0 and not ts.stderr, ts.stderr
        assert ts.stdout.strip() == str(script)
        made[base] = Run(preset, folder, {"onnx": folder / "export" / "policy.onnx", "ts": script})
    return made


def coach_actions(run: Run, observations: np.ndarray) -> np.ndarray:
    """What Coach's greedy evaluation sends to the environment for ``observations``: the
    run's graph built and its agents restored as ``coach --evaluate -crd`` does, the agent
    acting in evaluation through its own filters."""
    graph = load_run_preset(run.folder / "params.yaml", str(run.preset)).graph_manager
    graph.create_graph(RunContext(seed=0, quiet=True))
    try:
        graph.load_state_dict(load_checkpoint(run.folder), whole_run=False)
        agent = graph.top_level.agent
        agent.phase = RunPhase.EVALUATE
        agent.state = agent.input_filter.filter_observation({"observation": observations}, False)
        actions: np.ndarray = agent.act().env_action
        return actions
    finally:
        graph.close()


def sampled_observations(run: Run, count: int = 1000) -> np.ndarray:
    """``count`` observations drawn from the run's observation space (seeded)."""
    graph = load_run_preset(run.folder / "params.yaml", str(run.preset)).graph_manager
    space = graph.parameters()["environment"].build().observation_space["observation"]
    space.seed(7)
    return np.stack([space.sample() for _ in range(count)]).astype(np.float32)


@SHARED
@JIT_LOAD
@pytest.mark.parametrize("base", list(BUDGETS))
def test_the_exported_files_act_as_coachs_greedy_evaluation(
    base: str, runs: dict[str, Run]
) -> None:
    run = runs[base]
    statistics = load_checkpoint(run.folder)["agents"][0]["input_filter"]["0"]
    assert statistics["count"] > 0 and np.abs(statistics["mean"]).max() > 1e-3  # learned
    observations = sampled_observations(run)
    expected = coach_actions(run, observations)
    session = onnxruntime.InferenceSession(str(run.files["onnx"]))
    (from_onnx,) = session.run(["action"], {"observation": observations})
    scripted = torch.jit.load(str(run.files["ts"]))
    from_script = scripted(torch.from_numpy(observations)).numpy()
    for got in (from_onnx, from_script):
        assert got.shape == expected.shape
        if base in CONTINUOUS:
            assert got.dtype == np.float32
            difference = np.abs(got.astype(np.float64) - expected).max()
            assert difference <= 1e-5, difference
        else:
            assert got.dtype == np.int64
            np.testing.assert_array_equal(got, expected)
    assert len(np.unique(expected, axis=0)) > 1  # a policy that tells observations apart


@SHARED
@JIT_LOAD
@pytest.mark.parametrize("base", list(BUDGETS))
def test_the_exported_files_act_on_a_batch_of_any_size(base: str, runs: dict[str, Run]) -> None:
    # The batch axis is dynamic in the files, not fixed at the example's the export traced.
    run = runs[base]
    observations = sampled_observations(run, 7)
    session = onnxruntime.InferenceSession(str(run.files["onnx"]))
    (batch_axis, *_) = session.get_inputs()[0].shape
    assert isinstance(batch_axis, str), session.get_inputs()[0].shape  # a named, free axis
    scripted = torch.jit.load(str(run.files["ts"]))
    for batch in (1, 3, 7):
        rows = observations[:batch]
        (from_onnx,) = session.run(["action"], {"observation": rows})
        from_script = scripted(torch.from_numpy(rows)).numpy()
        expected = coach_actions(run, rows)
        for got in (from_onnx, from_script):
            assert got.shape == expected.shape and len(got) == batch
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)


@SHARED
def test_an_exported_sac_policy_runs_with_onnxruntime_and_numpy_alone(
    runs: dict[str, Run],
) -> None:
    run = runs["Pendulum_SAC"]
    snippet = _block("python", "import numpy as np\nimport onnxruntime")
    script = "\n".join(
        [
            "import json, runpy, sys",
            "sys.argv = ['run_onnx_policy.py', 'policy.onnx', '3']",
            f"runpy.run_path({str(EXAMPLE)!r}, run_name='__main__')",  # the example's lines
            snippet,  # then the snippet of docs/studies.md, and what it computed
            "print(json.dumps([observations.tolist(), actions.tolist()]))",
            "assert 'torch' not in sys.modules and 'coach' not in sys.modules, sys.modules",
        ]
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=run.files["onnx"].parent,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    *example, last = result.stdout.strip().splitlines()
    assert len(example) == 3 and all("->  action=" in line for line in example)
    observations, actions = (np.array(a, dtype=np.float32) for a in json.loads(last))
    assert np.abs(actions - coach_actions(run, observations)).max() <= 1e-5
    assert actions.shape == (2, 1) and np.all(np.abs(actions) <= 2.0)  # Pendulum's torques


def test_a_path_that_holds_no_checkpoint_is_refused_in_one_line(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not a checkpoint\n")
    result = coach("export", "-crd", str(notes), cwd=tmp_path)
    assert result.returncode == 2 and not result.stdout
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"coach: error: checkpoint {notes} is corrupted or unreadable: "), line
    for path, reason in (
        (tmp_path / "missing", "no checkpoint folder"),
        (tmp_path, "no checkpoint in"),
    ):
        with pytest.raises(CoachError, match=reason):
            export_run(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_a_recurrent_run_is_refused_in_one_line(tmp_path: Path) -> None:
    preset = load_preset("CartPoleNoVel_RecurrentPPO")  # a run that ends where it starts
    run = tmp_path / preset.name / "run"
    run.mkdir(parents=True)
    write_params(run / "params.yaml", preset, 0, [])
    graph = preset.graph_manager.create_graph(RunContext(experiment_dir=run, quiet=True))
    graph.save_checkpoint()
    graph.close()
    result = coach("export", "-crd", str(tmp_path / preset.name), cwd=tmp_path)
    assert result.returncode == 2 and not result.stdout
    (line,) = result.stderr.splitlines()
    assert line.startswith("coach: error: ClippedPPOAgent has recurrent networks"), line
    assert "hidden state" in line
    assert not (run / "export").exists()
