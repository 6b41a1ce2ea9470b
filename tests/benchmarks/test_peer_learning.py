"""The learning comparison against Stable-Baselines3 (`benchmarks.peers --learning`): its
table from hand-written records against rliable called directly; the SB3 specs that
`benchmarks.sb3_presets.plan` maps a learning rate schedule and A2C into, read back from the
SB3 models built; and one short real case of each library, recorded and tabled.

The short case runs as the short peer benchmark does (`test_benchmarks_short.py`, in the
default run): CartPole_DQN cut by ``-cp`` to a few thousand env steps, seed 0.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from benchmarks.peer_learning import (
    iqm,
    learning_section,
    learning_table,
    load_records,
    record_case,
    spec_hash,
)
from benchmarks.peer_runs import build_sb3, sb3_settings
from benchmarks.peers import settings_table
from benchmarks.sb3_presets import Unmappable, plan
from coach.parameters import parse_override, set_parameter
from coach.presets import load_preset
from tests.integration.coach_cli import ENV

ROOT = Path(__file__).resolve().parents[2]
SEEDS = (0, 1, 2, 3, 4)


def _case(reward: float, spec: str = "same") -> dict[str, Any]:
    return {
        "final_agent": reward,
        "last_evaluation": reward,
        "env_steps": 50_000,
        "gradient_steps": 24_448,
        "train_seconds": 40.0,
        "wall_seconds": 45.0,
        "overrides": [],
        "spec": spec,
        "commit": "abc1234",
        "date": "2026-12-01",
    }


def _entry(algorithm: str, threshold: float, coach: list[float], sb3: list[float]) -> Any:
    return {
        "algorithm": algorithm,
        "threshold": threshold,
        "cases": {
            "coach": {str(seed): _case(r) for seed, r in enumerate(coach)},
            "sb3": {str(seed): _case(r) for seed, r in enumerate(sb3)},
        },
    }


REWARDS = {
    "CartPole_DQN": ([500.0, 480.0, 120.0, 500.0, 475.0], [182.5, 500.0, 460.0, 490.0, 300.0]),
    "Pendulum_TD3": (
        [-150.0, -200.0, -210.0, -180.0, -160.0],
        [-250.0, -199.9, -300.0, -140.0, -200.1],
    ),
}
HOLDING = {"CartPole_DQN": ("4/5", "2/5"), "Pendulum_TD3": ("4/5", "2/5")}
"""By hand: the seeds at or above 475 (CartPole) and -200 (Pendulum)."""


def _records() -> dict[str, Any]:
    records = {
        "CartPole_DQN": _entry("DQN", 475.0, *REWARDS["CartPole_DQN"]),
        "Pendulum_TD3": _entry("TD3", -200.0, *REWARDS["Pendulum_TD3"]),
        # SB3's seed 4 is missing.
        "CartPole_A2C": _entry("A2C", 475.0, [500.0] * 5, [500.0] * 4),
        # Coach's seed 2 ran with other parameters than the others.
        "CartPole_ClippedPPO": _entry("PPO", 475.0, [500.0] * 5, [500.0] * 5),
    }
    records["CartPole_ClippedPPO"]["cases"]["coach"]["2"]["spec"] = "other"
    return records


def _rows(text: str) -> dict[str, list[str]]:
    """The table's rows by preset: their cells."""
    rows = [line.strip("|").split("|") for line in text.splitlines() if line.startswith("| ")]
    return {cells[0].strip(): [c.strip() for c in cells] for cells in rows[1:]}


def _rliable_iqm(rewards: list[float]) -> tuple[float, float, float]:
    """rliable called directly: the IQM and its 95% interval over one task's runs."""
    from rliable import library, metrics

    state = np.random.get_state()
    np.random.seed(0)  # rliable resamples from numpy's global generator
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        points, intervals = library.get_interval_estimates(
            {"x": np.asarray(rewards).reshape(-1, 1)},
            lambda x: np.array([metrics.aggregate_iqm(x)]),
            reps=2000,
            confidence_interval_size=0.95,
            random_state=np.random.RandomState(0),
        )
    np.random.set_state(state)
    return float(points["x"][0]), float(intervals["x"][0][0]), float(intervals["x"][1][0])


def test_the_table_shows_rliables_iqm_and_interval_and_the_fractions_holding() -> None:
    rows = _rows(learning_table(_records(), SEEDS))
    for preset, sides in REWARDS.items():
        row = rows[preset]
        assert row[1:4] == [preset.split("_")[1], "5", f"≥ {_records()[preset]['threshold']:g}"]
        for cell, rewards in zip(row[4:6], sides, strict=True):
            point, low, high = _rliable_iqm(rewards)
            assert cell == f"{point:,.1f} [{low:,.1f}, {high:,.1f}]"
            estimate = iqm(rewards)
            assert (estimate.point, estimate.low, estimate.high) == pytest.approx(
                (point, low, high)
            )
        assert tuple(row[6:8]) == HOLDING[preset]
    # rliable's IQM of five rewards (scipy's trim_mean of a quarter at each end): the mean
    # of the middle three, 475, 480 and 500.
    assert iqm(REWARDS["CartPole_DQN"][0]).point == pytest.approx(485.0)
    assert iqm(REWARDS["CartPole_DQN"][1]) == iqm(REWARDS["CartPole_DQN"][1])  # seeded


def test_a_side_without_every_seed_or_with_mixed_parameters_is_incomplete() -> None:
    rows = _rows(learning_table(_records(), SEEDS))
    a2c, ppo = rows["CartPole_A2C"], rows["CartPole_ClippedPPO"]
    assert a2c[4:] == ["5 of 5 seeds", "incomplete: 4 of 5 seeds"] * 2
    mixed = "incomplete: seeds recorded with different parameters"
    assert ppo[4:] == [mixed, "5 of 5 seeds"] * 2
    assert not any("[" in cell or "/" in cell for cell in a2c[4:] + ppo[4:])
    # On the four seeds that both sides have, A2C is complete.
    assert _rows(learning_table(_records(), SEEDS[:4]))["CartPole_A2C"][6:] == ["4/4", "4/4"]


def test_the_table_says_when_and_how_it_was_recorded(tmp_path: Path) -> None:
    text = learning_table(_records(), SEEDS)
    assert "Recorded at commit `abc1234` on 2026-12-01." in text
    assert "--presets CartPole_DQN Pendulum_TD3 CartPole_A2C CartPole_ClippedPPO" in text
    assert "--seeds 0-4" in text and "-cp" not in text
    assert "has not been recorded yet" in learning_section(tmp_path / "none.json")


def test_records_are_written_case_by_case(tmp_path: Path) -> None:
    path = tmp_path / "records.json"
    record_case(path, "CartPole_DQN", "DQN", 475.0, "sb3", 3, _case(500.0))
    record_case(path, "CartPole_DQN", "DQN", 475.0, "sb3", 1, _case(200.0))
    record_case(path, "CartPole_DQN", "DQN", 475.0, "sb3", 3, _case(490.0))
    cases = load_records(path)["CartPole_DQN"]["cases"]["sb3"]
    assert list(cases) == ["1", "3"] and cases["3"]["final_agent"] == 490.0
    assert spec_hash({"a": 1, "b": [2]}) == spec_hash({"b": [2], "a": 1})
    assert spec_hash({"a": 1}) != spec_hash({"a": 2})


def _sb3(spec: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    model, gate, evaluation = build_sb3(spec)
    return model, sb3_settings(spec, model, gate, evaluation)


SCHEDULE = [
    "agent.algorithm.learning_rate_decay=None",
    "agent.algorithm.learning_rate_schedule=LinearSchedule(1e-3, 1e-5, 20000)",
]
"""A rate of its own for every network."""
DECAY = [
    "agent.algorithm.learning_rate_decay=LinearSchedule(1.0, 0.01, 20000)",
    "agent.network_wrappers.main.learning_rate=1e-3",
]
"""A factor on the network's own rate: the same rates."""


@pytest.mark.parametrize("heatup", [None, "EnvironmentSteps(1280)", "EnvironmentSteps(100)"])
@pytest.mark.parametrize("scheduled", [SCHEDULE, DECAY], ids=["schedule", "decay"])
def test_a_linear_learning_rate_is_coachs_at_every_round_of_sb3s(
    heatup: str | None, scheduled: list[str]
) -> None:
    overrides = scheduled + ([f"schedule.heatup_steps={heatup}"] if heatup else [])
    peer = plan("CartPole_DQN", overrides)
    model, settings = _sb3(peer.spec)
    assert settings_table(peer, settings) == []
    # Coach: the preset's schedule at the training env steps before round k (one env copy).
    preset = load_preset("CartPole_DQN").graph_manager
    roots = preset.parameters()
    for text in overrides:
        set_parameter(roots, *parse_override(text))
    algorithm, network = preset.agent_params.algorithm, preset.agent_params.network_wrappers
    if algorithm.learning_rate_schedule is not None:
        coach_rate = algorithm.learning_rate_schedule.value
    else:  # as the agent sets it (`coach.agents.learning.follow_learning_rate`)
        decay = algorithm.learning_rate_decay
        coach_rate = lambda step: network["main"].learning_rate * decay.value(step)  # noqa: E731
    period = preset.agent_params.algorithm.num_consecutive_playing_steps.num_steps
    rounds = preset.schedule_params.improve_steps.num_steps // period
    # SB3: it trains after every `period` env steps counted from 0, once past learning_starts,
    # and calls its schedule with 1 - num_timesteps / total_timesteps.
    total, starts = peer.spec["total_timesteps"], model.learning_starts
    sb3_rounds = [t for t in range(period, total + 1, period) if t > starts]
    assert len(sb3_rounds) == rounds
    for k, timesteps in enumerate(sb3_rounds, start=1):
        sb3_rate = model.lr_schedule(1.0 - timesteps / total)
        assert sb3_rate == pytest.approx(coach_rate(k * period), rel=1e-12)
    assert model.lr_schedule(1.0) == pytest.approx(1e-3)


@pytest.mark.parametrize(
    ("preset", "schedule"),
    [
        ("CartPole_DQN", "ExponentialSchedule(1e-3, 1e-5, 0.999)"),
        ("Pendulum_TD3", "ExponentialSchedule(1e-3, 1e-5, 0.999)"),
        ("Pendulum_SAC", "LinearSchedule(1e-3, 0.0, 20000)"),  # SB3 schedules its temperature
    ],
)
def test_a_learning_rate_schedule_sb3_cannot_follow_is_unmappable(
    preset: str, schedule: str
) -> None:
    with pytest.raises(Unmappable):
        plan(
            preset,
            [
                "agent.algorithm.learning_rate_decay=None",
                f"agent.algorithm.learning_rate_schedule={schedule}",
            ],
        )
    with pytest.raises(Unmappable):  # the same as a factor on the networks' own rates
        plan(preset, [f"agent.algorithm.learning_rate_decay={schedule.replace('1e-3', '1.0')}"])


def test_a_learning_rate_over_episodes_is_unmappable() -> None:
    with pytest.raises(Unmappable, match="counts env steps, not episodes"):
        plan("CartPole_DQN", ["agent.algorithm.learning_rate_clock='episodes'"])


@pytest.mark.parametrize(
    ("preset", "overrides"),
    [
        ("CartPole_DQN", []),  # with or without a schedule, as the preset file has it
        ("CartPole_DQN", ["agent.algorithm.learning_rate_decay=None"]),
        ("CartPole_A2C", []),
    ],
)
def test_sb3s_settings_read_back_equal_coachs(preset: str, overrides: list[str]) -> None:
    peer = plan(preset, overrides)
    _, settings = _sb3(peer.spec)
    assert settings_table(peer, settings) == []


def test_the_a2c_peer_is_sb3s_a2c_with_coachs_adam_and_networks() -> None:
    peer = plan("CartPole_A2C")
    assert peer.algorithm == "A2C"
    model, settings = _sb3(peer.spec)
    assert type(model).__name__ == "A2C"
    assert type(model.policy.optimizer) is torch.optim.Adam  # not SB3's default RMSprop
    assert model.policy.optimizer.defaults["eps"] == 1e-8
    assert (model.n_envs, model.n_steps, model.gae_lambda, model.ent_coef) == (8, 5, 1.0, 0.0)
    assert (model.vf_coef, model.max_grad_norm, model.normalize_advantage) == (0.5, 0.5, False)
    assert model.lr_schedule(0.5) == pytest.approx(7e-4)
    assert settings["actor"] == "4x64 64x64 64x2 tanh"
    assert settings["critic"] == "4x64 64x64 64x1 tanh"
    assert peer.spec["total_timesteps"] == 500_000


SHORT = [
    "schedule.heatup_steps=EnvironmentSteps(500)",
    "schedule.improve_steps=EnvironmentSteps(2048)",
    "schedule.steps_between_evaluation_periods=EnvironmentSteps(1024)",
    "schedule.evaluation_steps=EnvironmentEpisodes(2)",
]


def _learning(records: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "benchmarks.peers", "--learning", "--presets"]
    command += ["CartPole_DQN", "--seeds", "0", "--records", str(records)]
    for override in SHORT:
        command += ["-cp", override]
    return subprocess.run(command, cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=600)


def test_a_short_case_of_each_library_is_recorded_and_tabled(tmp_path: Path) -> None:
    records = tmp_path / "peer_learning.json"
    done = _learning(records)
    assert done.returncode == 0, done.stdout + done.stderr
    entry = json.loads(records.read_text())["CartPole_DQN"]
    assert (entry["algorithm"], entry["threshold"]) == ("DQN", 475.0)
    coach, sb3 = (entry["cases"][side]["0"] for side in ("coach", "sb3"))
    for case in (coach, sb3):
        assert 8.0 <= case["final_agent"] <= 500.0  # a CartPole episode's reward
        assert case["overrides"] == SHORT and case["commit"] and case["date"]
        assert case["wall_seconds"] >= case["train_seconds"] > 0
    assert coach["env_steps"] == 2548 and sb3["env_steps"] == 2304  # SB3 counts from step 0
    assert coach["gradient_steps"] == sb3["gradient_steps"] == 8 * 128
    assert coach["spec"] != sb3["spec"]
    table = learning_table(load_records(records), [0])
    assert table in done.stdout
    row = _rows(table)["CartPole_DQN"]
    assert row[:4] == ["CartPole_DQN", "DQN", "1", "≥ 475"]
    assert row[4] == f"{coach['final_agent']:,.1f} [{coach['final_agent']:,.1f}, " + (
        f"{coach['final_agent']:,.1f}]"
    )
    assert "Run with `-cp` overrides" in table
    assert "-cp 'schedule.heatup_steps=EnvironmentSteps(500)'" in table
    # Recorded with the same parameters: not run again.
    again = _learning(records)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("0 of 2 cases to run")
    assert json.loads(records.read_text())["CartPole_DQN"] == entry
