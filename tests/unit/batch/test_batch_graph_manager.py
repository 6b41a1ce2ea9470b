"""Unit tests for coach/graph_managers/batch_rl.py and coach/environments/recording.py: a
real CartPole run recorded into a local Minari dataset, and batch agents learning from it
(DDQN-BCQ, CQL, behavioral cloning), with off-policy estimates read back from TensorBoard."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from coach.agents.bc import BCAgentParameters
from coach.agents.bcq import DDQNBCQAgentParameters
from coach.agents.cql import CQLAgentParameters
from coach.agents.ddqn import DDQNAgentParameters
from coach.batch.datasets import load_dataset, transitions
from coach.batch.graph_manager import BatchRLGraphManager, BatchRLParameters, batch_schedule
from coach.batch.recording import EpisodeRecorder
from coach.checkpoints import load_checkpoint
from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps, Epochs
from coach.environments.parameters import GymEnvironmentParameters
from coach.errors import CoachError
from coach.filters.action import PartialDiscreteActionSpaceMap
from coach.filters.observation.stacking import ObservationStackingFilter
from coach.filters.pipeline import OutputFilter
from coach.filters.reward.normalization import RewardNormalizationFilter
from coach.graph_managers.parameters import RunContext
from coach.memories.prioritized_experience_replay import PrioritizedExperienceReplayParameters
from coach.networks.heads import CategoricalPolicyHeadParameters, QHeadParameters
from coach.presets import load_preset
from coach.schedules import LinearSchedule
from tests.toys import FakeTerminal

NAME = "test/cartpole-dqn-v0"


@pytest.fixture()
def minari_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "minari"
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(root))
    return root


def _record(steps: int = 3000, name: str = NAME) -> tuple[EpisodeRecorder, object]:
    """A CartPole_DQN run of ``steps`` (heatup and training), recorded; returns the recorder
    and the agent (whose replay memory holds the same steps)."""
    graph = load_preset("CartPole_DQN").graph_manager
    graph.schedule_params.heatup_steps = EnvironmentSteps(500)
    graph.create_graph(RunContext(seed=3))
    recorder = EpisodeRecorder(
        graph.levels[0], graph.environment, [RunPhase.HEATUP, RunPhase.TRAIN]
    )
    graph.heatup(EnvironmentSteps(500))
    graph.train_and_act(EnvironmentSteps(steps - 500))
    recorder.write(name, "a test run")
    graph.close()
    return recorder, graph.levels[0].agent


def test_a_recorded_dataset_reloads_with_the_same_transitions(minari_root: Path) -> None:
    recorder, agent = _record()
    dataset = load_dataset(NAME)
    assert dataset.num_episodes == len(recorder.episodes) > 10
    assert dataset.total_steps == recorder.steps <= 3000
    assert "the episodes collected" not in dataset.metadata.get("description", "a test run")
    columns = transitions(dataset)
    # The replay memory stored every step of the run, the unfinished last episodes too: the
    # dataset's transitions are its first rows, the same values in the same order.
    memory = agent.memory
    n = len(columns["reward"])
    np.testing.assert_array_equal(columns["state"]["observation"], memory.states["observation"][:n])
    np.testing.assert_array_equal(columns["action"], memory.actions[:n])
    np.testing.assert_array_equal(columns["reward"], memory.rewards[:n])
    np.testing.assert_array_equal(
        columns["next_state"]["observation"], memory.next_states["observation"][:n]
    )
    np.testing.assert_array_equal(columns["terminated"], memory.terminated[:n])
    # The behaviour probabilities: uniform in heatup, e-greedy in training.
    probabilities = columns["extras"]["action_probabilities"]
    assert probabilities.shape == (n, 2)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0)
    np.testing.assert_allclose(probabilities[:20], 0.5)
    taken = probabilities[np.arange(n), columns["action"]]
    assert taken.min() > 0 and (probabilities[500:].max(axis=1) > 0.5).any()


def test_a_policy_agent_logs_the_probabilities_it_samples_from(minari_root: Path) -> None:
    graph = load_preset("CartPole_ClippedPPO").graph_manager
    graph.create_graph(RunContext(seed=0))
    recorder = EpisodeRecorder(graph.levels[0], graph.environment, [RunPhase.TRAIN])
    graph.train_and_act(EnvironmentSteps(2000))
    graph.close()
    episode = recorder.episodes[0]
    probabilities = episode.behaviour["action_probabilities"]
    assert probabilities.shape == (len(episode.rewards), 2)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-5)
    assert ((probabilities > 0.05) & (probabilities < 0.95)).any()  # a stochastic policy


def test_episodes_cut_by_an_evaluation_are_not_recorded(minari_root: Path) -> None:
    graph = load_preset("CartPole_DQN").graph_manager
    graph.create_graph(RunContext(seed=0))
    recorder = EpisodeRecorder(graph.levels[0], graph.environment, [RunPhase.HEATUP])
    graph.heatup(EnvironmentSteps(105))
    graph.evaluate(EnvironmentEpisodes(1))  # the heatup's open episode is dropped
    graph.heatup(EnvironmentSteps(100))
    graph.close()
    for episode in recorder.episodes:
        assert len(episode.rewards) == len(episode.actions) == len(episode.observations) - 1
        assert episode.terminations[-1] or episode.truncations[-1]
        assert not (episode.terminations[:-1] | episode.truncations[:-1]).any()
    assert recorder.steps < 205


def _batch_graph(agent, name: str = NAME, epochs: int = 2, **batch: object) -> BatchRLGraphManager:  # type: ignore[no-untyped-def]
    agent.algorithm.batch_size = 128
    return BatchRLGraphManager(
        agent,
        GymEnvironmentParameters(level="CartPole-v1"),
        batch_schedule(epochs, evaluation_episodes=2),
        BatchRLParameters(dataset=name, **batch),  # type: ignore[arg-type]
    )


def _scalars(directory: Path, run: str, tag: str) -> list[tuple[int, float]]:
    events = EventAccumulator(str(directory / "tensorboard" / run))
    events.Reload()
    return [(e.step, e.value) for e in events.Scalars(tag)]


def test_bcq_learns_epochs_over_the_dataset_with_estimates(
    minari_root: Path, tmp_path: Path
) -> None:
    _record()
    dataset = load_dataset(NAME)
    graph = _batch_graph(DDQNBCQAgentParameters())
    graph.create_graph(RunContext(seed=0, experiment_dir=tmp_path / "run", quiet=True))
    try:
        agent = graph.levels[0].agent
        assert len(agent.memory) == dataset.total_steps
        graph.improve()
        per_epoch = -(-dataset.total_steps // 128)
        assert graph.epoch == 2 and agent.training_steps == 2 * per_epoch
        assert graph.env_steps == agent.training_steps  # the clock is the gradient steps
        assert agent.learner.target_syncs == agent.training_steps // 100  # BCQ's TrainingSteps(100)
        assert len(graph.evaluations) == 2 and graph.evaluations[1].env_steps == 2 * per_epoch
        path = graph.save_checkpoint()
    finally:
        graph.close()
    run = tmp_path / "run"
    for name in ("ips", "dm", "dr", "sdr"):
        points = _scalars(run, "graph", f"OPE/{name}")
        assert [step for step, _ in points] == [per_epoch, 2 * per_epoch]
        assert all(np.isfinite(value) for _, value in points)
    dm = [v for _, v in _scalars(run, "graph", "OPE/dm")]
    assert all(abs(v - 1.0) < 0.2 for v in dm)  # CartPole pays 1 per step: the model learns it
    losses = _scalars(run, "main_level.agent", "Loss/imitation_loss")
    # Mostly random actions in this short run: the behaviour model is near a coin (ln 2).
    assert len(losses) == 2 and all(abs(v - np.log(2)) < 0.05 for _, v in losses)
    assert _scalars(run, "graph", "Evaluation/mean_reward")
    # A checkpoint carries the epochs and the dataset: a resumed run goes on from there.
    assert path is not None and load_checkpoint(path)["batch"] == {
        "epoch": 2,
        "dataset": NAME,
        "transitions": dataset.total_steps,
    }


def test_a_checkpoint_of_another_dataset_is_refused(minari_root: Path, tmp_path: Path) -> None:
    _record(1000)
    graph = _batch_graph(DDQNBCQAgentParameters(), epochs=1, off_policy_evaluation=False)
    graph.create_graph(RunContext(seed=0, experiment_dir=tmp_path / "run", quiet=True))
    try:
        graph.improve()
        state = graph.state_dict()
        state["batch"]["dataset"] = "test/other-v0"
        with pytest.raises(CoachError, match=r"learned from dataset 'test/other-v0'.*same dataset"):
            graph.load_state_dict(state)
        state["batch"]["dataset"] = NAME
        graph.load_state_dict(state)
        assert graph.epoch == 1
    finally:
        graph.close()


def test_what_cannot_learn_from_a_dataset_is_refused_naming_the_field(
    minari_root: Path,
) -> None:
    _record(1000)
    env_steps = DDQNAgentParameters()  # its target syncs count env steps, which batch has none
    mapped = DDQNBCQAgentParameters()
    mapped.output_filter = OutputFilter(action_filters=[PartialDiscreteActionSpaceMap([1, 0])])
    stacked = DDQNBCQAgentParameters()
    stacked.input_filter.observation_filters["observation"] = [ObservationStackingFilter(4)]
    normalized = DDQNBCQAgentParameters()
    normalized.input_filter.reward_filters = [RewardNormalizationFilter()]
    for agent, message in (
        (env_steps, r"num_steps_between_copying_online_weights_to_target=TrainingSteps\(500\)"),
        (
            mapped,
            r"remove agent.output_filter's action filters \['PartialDiscreteActionSpaceMap'\]",
        ),
        (stacked, r"input filters \['ObservationStackingFilter'\] keep per-episode history"),
        (normalized, r"input filters \['RewardNormalizationFilter'\]"),
    ):
        with pytest.raises(CoachError, match=message):
            _batch_graph(agent).create_graph(RunContext(seed=0))


def _shared_bcq() -> DDQNBCQAgentParameters:
    """BCQ in Fujimoto et al.'s form: the behaviour model a head of the Q network."""
    agent = DDQNBCQAgentParameters()
    main = agent.network_wrappers.pop("imitation") and agent.network_wrappers["main"]
    main.heads = [QHeadParameters(), CategoricalPolicyHeadParameters(name="logits")]
    return agent


def test_shared_bcq_weights_and_updates_prioritized_replay(
    minari_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _record(1000)
    agent = _shared_bcq()
    agent.memory = PrioritizedExperienceReplayParameters()
    graph = _batch_graph(agent, epochs=1, off_policy_evaluation=False)
    graph.create_graph(RunContext(seed=0))
    try:
        memory = graph.levels[0].agent.memory
        updated: list[int] = []
        update = memory.update_priorities
        monkeypatch.setattr(
            memory, "update_priorities", lambda i, e: updated.append(len(i)) or update(i, e)
        )
        graph.improve()
        assert updated == [128] * graph.levels[0].agent.training_steps
    finally:
        graph.close()


def test_bcq_needs_a_behaviour_model() -> None:
    agent = DDQNBCQAgentParameters()
    del agent.network_wrappers["imitation"]
    environment = GymEnvironmentParameters(level="CartPole-v1").build()
    environment.close()
    with pytest.raises(CoachError, match="needs a behaviour model"):
        agent.agent_class()(agent, environment.observation_space, environment.action_space, 1, 0)


def test_cql_and_cloning_agents_train_on_the_dataset(minari_root: Path, tmp_path: Path) -> None:
    _record(2000)
    for agent in (CQLAgentParameters(), BCAgentParameters(), _shared_bcq()):
        graph = _batch_graph(agent, epochs=1, off_policy_evaluation=False)
        graph.create_graph(RunContext(seed=0))
        try:
            graph.improve()
            assert graph.epoch == 1 and graph.levels[0].agent.training_steps > 0
            assert len(graph.evaluations) == 1
        finally:
            graph.close()


def test_a_dataset_of_other_spaces_is_refused_with_both(minari_root: Path) -> None:
    _record(1000)
    graph = _batch_graph(DDQNBCQAgentParameters())
    graph.env_params.level = "Acrobot-v1"
    with pytest.raises(
        CoachError, match=r"Box\(.*\(4,\).*Box\(.*\(6,\)|Discrete\(2\).*Discrete\(3\)"
    ):
        graph.create_graph(RunContext(seed=0))


def test_n_step_returns_are_refused_with_the_field_to_change(minari_root: Path) -> None:
    _record(1000)
    agent = DDQNBCQAgentParameters()
    agent.algorithm.n_step = 3
    graph = _batch_graph(agent)
    with pytest.raises(CoachError, match=r"\['discount'\].*agent\.algorithm\.n_step at 1"):
        graph.create_graph(RunContext(seed=0))


def test_a_missing_dataset_says_how_to_make_it(minari_root: Path) -> None:
    recipe = "coach -p CartPole_DQN --record-dataset test/nothing"
    graph = _batch_graph(DDQNBCQAgentParameters(), name="test/nothing-v0", dataset_recipe=recipe)
    with pytest.raises(CoachError, match="make it with:\ncoach -p CartPole_DQN"):
        graph.create_graph(RunContext(seed=0))


def test_a_batch_schedule_counts_epochs(minari_root: Path) -> None:
    _record(1000)
    graph = _batch_graph(DDQNBCQAgentParameters())
    graph.schedule_params.improve_steps = EnvironmentSteps(10)
    with pytest.raises(
        CoachError,
        match=r"schedule.improve_steps must be counted in Epochs, got EnvironmentSteps\(10\)",
    ):
        graph.create_graph(RunContext(seed=0))
    assert Epochs(3).num_steps == 3


def test_a_terminal_shows_the_epochs_as_a_live_bar(
    minari_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _record(1000)
    console = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", console)
    monkeypatch.setenv("COLUMNS", "121")
    monkeypatch.delenv("TERM", raising=False)
    graph = _batch_graph(BCAgentParameters(), epochs=2, off_policy_evaluation=False)
    graph.create_graph(RunContext(seed=0, experiment_dir=tmp_path))
    try:
        graph.improve()
    finally:
        graph.close()
    frames = [f for f in console.getvalue().split("\r") if f.startswith("train ")]
    assert "| 0/2 epochs" in frames[0]
    assert frames[-1].startswith("train    100% |") and "| 2/2 epochs" in frames[-1]
    assert console.getvalue().count("epoch   2/2") == 1  # each epoch's line, above the bar
    assert "\r" not in (tmp_path / "log.txt").read_text()


def test_a_decay_over_gradient_steps_runs_a_batch_agents_rate_down(
    minari_root: Path, tmp_path: Path
) -> None:
    """A batch run acts no env step: a decay over its gradient steps
    (``learning_rate_clock="training_steps"``) is what moves its rate, to 0 at the end of
    its epochs."""
    _record(2000)
    per_epoch = math.ceil(load_dataset(NAME).total_steps / 128)
    agent_params = CQLAgentParameters()
    # The last step's rate is set at the count before it: 0 there, 0 for the whole last step.
    agent_params.algorithm.learning_rate_decay = LinearSchedule(1.0, 0.0, 2 * per_epoch - 1)
    agent_params.algorithm.learning_rate_clock = "training_steps"
    graph = _batch_graph(agent_params, epochs=2, off_policy_evaluation=False)
    graph.create_graph(RunContext(seed=0, quiet=True))
    try:
        weights = [
            p.detach().clone() for p in graph.levels[0].agent.networks["main"].online.parameters()
        ]
        graph.improve()
        agent = graph.levels[0].agent
        assert agent.training_steps == 2 * per_epoch
        assert agent.training_env_steps == 0
        assert [g["lr"] for g in agent.networks["main"].optimizer.param_groups] == [0.0]
        moved = [p.detach() for p in agent.networks["main"].online.parameters()]
        assert any(not torch.equal(a, b) for a, b in zip(weights, moved, strict=True))
    finally:
        graph.close()
