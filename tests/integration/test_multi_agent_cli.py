"""Multi-agent presets through the real command: a shared-PPO run on simple_spread,
interrupted with Ctrl-C and resumed, ends exactly like the uninterrupted run; its logs have a
TensorBoard run per agent, per id and for the team; a self-play run keeps its pool of
snapshots in its checkpoints, and ``--evaluate`` plays its ``best.pt``."""

from __future__ import annotations

import csv
import signal
from pathlib import Path

import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from coach.checkpoints import find_checkpoint
from tests.integration.coach_cli import coach, experiment, rewards, start, wait_for

SPREAD = "SimpleSpread_SharedPPO"
SHORT = [
    "-p", SPREAD, "--seed", "2",
    "-cp", "schedule.improve_steps=EnvironmentSteps(6000)",
    "-cp", "schedule.steps_between_evaluation_periods=EnvironmentSteps(2000)",
    "-cp", "schedule.evaluation_steps=EnvironmentEpisodes(4)",
    "-cp", "environment.num_envs=2",
    "-cp", "agents.spread.memory.rollout_length=25",
    "-cp", "agents.spread.algorithm.batch_size=150",
]  # fmt: skip
GAME = "TicTacToe_SelfPlay_DQN"
GAME_SHORT = [
    "-p", GAME, "--seed", "1",
    "-cp", "schedule.heatup_steps=EnvironmentSteps(500)",
    "-cp", "schedule.improve_steps=EnvironmentSteps(3000)",
    "-cp", "schedule.steps_between_evaluation_periods=EnvironmentSteps(1000)",
    "-cp", "schedule.evaluation_steps=EnvironmentEpisodes(10)",
    "-cp", "self_play.snapshot_every=EnvironmentSteps(400)",
    "-cp", "self_play.pool_size=3",
]  # fmt: skip


def test_sigint_then_resume_ends_exactly_like_an_uninterrupted_run(tmp_path: Path) -> None:
    whole = coach(*SHORT, "-ep", str(tmp_path / "whole"), cwd=tmp_path)
    assert whole.returncode == 0, whole.stderr
    reference = experiment(tmp_path / "whole", SPREAD)

    process = start(*SHORT, "-ep", str(tmp_path / "cut"), cwd=tmp_path)
    wait_for(process, "evaluate env steps     2000")
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    run = experiment(tmp_path / "cut", SPREAD)
    assert rewards(run) != rewards(reference)  # it did stop early

    resumed = coach("--resume", str(run), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert rewards(run) == rewards(reference)
    final = [torch.load(find_checkpoint(r), weights_only=False) for r in (reference, run)]
    networks = [f["agents"][0]["actors"]["spread"]["networks"] for f in final]
    for name, state in networks[0].items():
        for key, value in state["online"].items():
            assert torch.equal(networks[1][name]["online"][key], value), (name, key)


ADVERSARY_PRESET = '''
""" A DQN adversary against a shared Clipped PPO team on MPE's simple_adversary, 4 copies,
written from docs/multi-agent.md."""
from coach import (
    ClippedPPOAgentParameters,
    DQNAgentParameters,
    EnvironmentEpisodes,
    EnvironmentSteps,
    MultiAgentGraphManager,
    PettingZooEnvironmentParameters,
    ScheduleParameters,
)
from coach.agents.on_policy import actor_critic_networks
from coach.networks import CategoricalPolicyHeadParameters

adversary = DQNAgentParameters()
adversary.name = "adversary"

team = ClippedPPOAgentParameters()
team.name = "team"
team.memory.rollout_length = 32
team.network_wrappers = actor_critic_networks(CategoricalPolicyHeadParameters(), 3e-4)

graph_manager = MultiAgentGraphManager(
    agents={"adversary": adversary, "team": team},
    env_params=PettingZooEnvironmentParameters(
        env="mpe2:simple_adversary_v3", kwargs={"continuous_actions": False}, num_envs=4
    ),
    schedule_params=ScheduleParameters(
        heatup_steps=EnvironmentSteps(200),
        improve_steps=EnvironmentSteps(2000),
        steps_between_evaluation_periods=EnvironmentSteps(800),
        evaluation_steps=EnvironmentEpisodes(4),
    ),
    mapping={"adversary_*": "adversary", "agent_*": "team"},
)
'''
"""Each episode of simple_adversary draws the team's goal landmark: every agent holds it
(``agent.goal_a``), so the landmark is reached first through an agent."""


def test_a_preset_written_from_the_docs_on_simple_adversary_resumes_exactly(
    tmp_path: Path,
) -> None:
    (tmp_path / "Adversary_Mixed.py").write_text(ADVERSARY_PRESET)
    args = ["-p", str(tmp_path / "Adversary_Mixed.py"), "--seed", "3", "--save-memory"]
    whole = coach(*args, "-ep", str(tmp_path / "whole"), cwd=tmp_path)
    assert whole.returncode == 0, whole.stderr
    reference = experiment(tmp_path / "whole", "Adversary_Mixed")

    process = start(*args, "-ep", str(tmp_path / "cut"), cwd=tmp_path)
    wait_for(process, "evaluate env steps     1000")  # training goes on, episodes in flight
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    run = experiment(tmp_path / "cut", "Adversary_Mixed")
    assert torch.load(find_checkpoint(run), weights_only=True)["environment"] is not None
    assert rewards(run) != rewards(reference)  # it did stop early

    preset = str(tmp_path / "Adversary_Mixed.py")  # its params.yaml names it: allowed here
    resumed = coach("--resume", str(run), "--save-memory", "--allow-import", preset, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "restart" not in (run / "log.txt").read_text()  # the episodes in flight went on
    assert rewards(run) == rewards(reference)


def test_every_agent_id_and_the_team_have_their_own_logs(tmp_path: Path) -> None:
    done = coach(*SHORT, "-ep", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    run = experiment(tmp_path, SPREAD)
    runs = {p.name for p in (run / "tensorboard").iterdir()}
    ids = {f"main_level.spread.agent_{k}" for k in range(3)}
    assert {"graph", "main_level", "main_level.spread"} | ids <= runs
    for name in ids:
        events = EventAccumulator(str(run / "tensorboard" / name))
        events.Reload()
        assert "Train/episode_reward" in events.Tags()["scalars"]
        assert "Evaluation/mean_reward" in events.Tags()["scalars"]
    with open(run / "progress.csv") as f:
        agents = {row["agent"] for row in csv.DictReader(f)}
    assert {"main_level", "main_level.spread", "graph"} | ids <= agents


def test_self_play_keeps_its_pool_in_checkpoints_and_evaluates_its_best(tmp_path: Path) -> None:
    done = coach(*GAME_SHORT, "-ep", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    run = experiment(tmp_path, GAME)
    state = torch.load(find_checkpoint(run), weights_only=False)
    pool = state["agents"][0]["actors"]["opponents"]
    assert len(pool["snapshots"]) == 3  # bounded: the newest three of more taken
    assert pool["snapshot_steps"] == sorted(pool["snapshot_steps"])
    best = run / "checkpoints" / "best.pt"
    assert best.is_file()
    evaluated = coach("-p", GAME, "-crd", str(best), "--evaluate", "20", cwd=tmp_path)
    assert evaluated.returncode == 0, evaluated.stderr
    assert "success" in evaluated.stdout + evaluated.stderr
