"""Every shipped preset loads, builds and runs a few hundred steps end to end: every level's
agent stores transitions and takes gradient steps."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from benchmarks.batch_rl import record_random_dataset
from coach.batch.graph_manager import BatchRLGraphManager
from coach.environments.atari import AtariEnvironmentParameters
from coach.experiment import write_params
from coach.graph_managers.graph_manager import GraphManager
from coach.graph_managers.parameters import RunContext
from coach.graph_managers.run_state import parameter_changes, trained_parameters
from coach.memories.rollout import RolloutParameters
from coach.parallel.asynchronous import AsynchronousGraphManager
from coach.parameters import set_parameter
from coach.presets import describe, list_presets, load_preset, load_run_preset

TINY = {
    "schedule.heatup_steps": "EnvironmentSteps(100)",
    "schedule.improve_steps": "EnvironmentSteps(200)",
    "schedule.steps_between_evaluation_periods": "EnvironmentSteps(100)",
    "schedule.evaluation_steps": "EnvironmentEpisodes(1)",
}
"""Every preset's budget: 100 steps of heatup, 200 of training, an evaluation every 100."""

_ROUNDS = {
    "agent.algorithm.num_consecutive_playing_steps": "EnvironmentSteps(100)",
    "agent.algorithm.num_consecutive_training_steps": "4",
}
_SPARSE_ROUNDS = {
    "agent.algorithm.num_consecutive_playing_steps": "EnvironmentSteps(25)",
    "agent.algorithm.num_consecutive_training_steps": "1",
}
TRAINING: dict[str, dict[str, str]] = {
    # Q presets that train in rounds every 256 or 320 env steps: a round every 100.
    **{
        name: _ROUNDS
        for name in (
            "BitFlip_DQN",
            "BitFlip_DQN_HER",
            "CartPole_Bootstrapped_DQN",
            "CartPole_C51",
            "CartPole_DDQN",
            "CartPole_DQN",
            "CartPole_Dueling_DDQN",
            "CartPole_MMC",
            "CartPole_NStepQ",
            "CartPole_PAL",
            "CartPole_QR_DQN",
            "CartPole_Rainbow",
        )
    },
    # On-policy presets whose blocks outgrow 200 steps: blocks of 64 steps (over all copies),
    # a minibatch at most.
    **{
        name: {"agent.memory.rollout_length": "8", "agent.algorithm.batch_size": "64"}
        for name in (
            "CartPole_ClippedPPO",
            "CartPoleNoVel_ClippedPPO",
            "CartPoleNoVel_RecurrentPPO",
        )
    },
    "CartPole_PPO": {"agent.memory.rollout_length": "8", "agent.algorithm.batch_size": "64"},
    # Multi-agent on-policy presets: blocks of 8 steps per slot.
    "SimpleSpread_SharedPPO": {
        "agents.spread.memory.rollout_length": "8",
        "agents.spread.algorithm.batch_size": "64",
    },
    "SimpleTag_DQN_vs_ClippedPPO": {
        "agents.prey.memory.rollout_length": "8",
        "agents.prey.algorithm.batch_size": "32",
        "agents.predators.algorithm.num_consecutive_playing_steps": "EnvironmentSteps(48)",
    },
    "SimpleSpread_IndependentPPO": {
        key: value
        for k in range(3)
        for key, value in (
            (f"agents.agent_{k}.memory.rollout_length", "8"),
            (f"agents.agent_{k}.algorithm.batch_size", "32"),
        )
    },
    # Self-play: the learner moves in half the moves, blocks of 4 moves per slot.
    "TicTacToe_SelfPlay_ClippedPPO": {
        "agents.player.memory.rollout_length": "4",
        "agents.player.algorithm.batch_size": "32",
    },
    # Presets of large networks (or convolutions) that train on every env step or in long
    # rounds: a gradient step every 25 env steps. A few steps cover what 200 would (about 2.5
    # s each; their own rounds run in the golden runs).
    **{
        name: _SPARSE_ROUNDS
        for name in (
            "BipedalWalker_TD3",
            "ControlSuite_DDPG",
            "ControlSuite_SAC",
            "Doom_Basic_DQN",
            "Doom_Health_DFP",
            "Doom_Health_MMC",
            "Fetch_DDPG_HER",
            "LunarLanderContinuous_SAC",
            "LunarLander_Rainbow",
            "Mujoco_DDPG",
            "Mujoco_SAC",
            "Mujoco_TD3",
            "Mujoco_Wolpertinger",
            "Pendulum_DDPG",
            "Pendulum_NAF",
            "Pendulum_SAC",
            "Pendulum_TD3",
        )
    },
    # NEC trains once every action's dictionary holds k entries.
    "CartPole_NEC": {"agent.algorithm.number_of_knn": "5"},
    "Doom_Basic_NEC": {"agent.algorithm.number_of_knn": "5", **_SPARSE_ROUNDS},
    "CartPole_PG": {"agent.memory.rollout_length": "8"},
    "LunarLander_ClippedPPO": {"agent.memory.rollout_length": "4"},
    "Mujoco_ClippedPPO": {"agent.memory.rollout_length": "64"},
    "Pendulum_ClippedPPO": {"agent.memory.rollout_length": "16"},
    "PendulumNoVel_RecurrentPPO": {
        "agent.memory.rollout_length": "16",
        "agent.algorithm.sequence_length": "16",
        "agent.algorithm.batch_size": "32",
    },
}
"""What a preset needs on top of `TINY` to store and learn within it (a smaller playing
period: the budget stays the same)."""


def _counting(store: Callable[..., object], calls: list[int]) -> Callable[..., object]:
    """``store``, which also appends to ``calls`` each time (whatever its arguments)."""

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return store(*args, **kwargs)

    return counting


def _count_stores(graph: GraphManager) -> list[list[int]]:
    """For each level, a list that grows by one on each store into its agent's memory."""
    counts: list[list[int]] = []
    for level in graph.levels:
        for name, agent in level.agents.items():
            memory = agent.memory
            assert memory is not None, f"{level.name}'s agent {name} has no memory"
            counts.append([])
            memory.store = _counting(memory.store, counts[-1])  # type: ignore[method-assign]
    return counts


def _is_atari(name: str) -> bool:
    environment = load_preset(name).graph_manager.parameters()["environment"]
    return isinstance(environment, AtariEnvironmentParameters)


def _learns_from_blocks(name: str) -> bool:
    return isinstance(
        load_preset(name).graph_manager.parameters()["agent"].memory, RolloutParameters
    )


ATARI_ALL = [name for name in list_presets() if _is_atari(name)]
ATARI = [name for name in ATARI_ALL if not _learns_from_blocks(name)]
"""The Atari presets that learn from replay (through the frame store)."""
ATARI_ON_POLICY = [name for name in ATARI_ALL if _learns_from_blocks(name)]
BATCH = [n for n in list_presets() if isinstance(load_preset(n).graph_manager, BatchRLGraphManager)]
ASYNCHRONOUS = [
    n for n in list_presets() if isinstance(load_preset(n).graph_manager, AsynchronousGraphManager)
]
"""The presets trained by asynchronous workers: the workers' agents store and learn."""


@pytest.mark.parametrize(
    "name", [n for n in list_presets() if n not in ATARI_ALL + BATCH + ASYNCHRONOUS]
)
def test_preset_runs_briefly(name: str, tmp_path: Path) -> None:
    preset = load_preset(name)
    environment, agent = describe(preset)
    assert environment != "?" and agent != "?"
    roots = preset.graph_manager.parameters()
    for path, value in {**TINY, **TRAINING.get(name, {})}.items():
        set_parameter(roots, path, value)
    trained_with = trained_parameters(roots)
    graph = preset.graph_manager.create_graph(
        RunContext(seed=0, experiment_dir=tmp_path, quiet=True)
    )
    stores = _count_stores(graph)
    try:
        graph.improve()
    finally:
        graph.close()
    # A run never changes its own parameters: what its checkpoints record is its params.yaml.
    assert trained_parameters(graph.parameters()) == trained_with
    agents = [(level, agent) for level in graph.levels for agent in level.agents.values()]
    for (level, agent), calls in zip(agents, stores, strict=True):
        assert calls, f"{name}: {level.name}'s agent {agent.name} stored no transition"
        assert agent.training_steps >= 1, (
            f"{name}: {level.name}'s agent {agent.name} took no gradient step"
        )
    # Three phases of 100 steps; a batch of B env copies may run past each by up to B - 1,
    # and a hierarchy's top step (its levels' horizons multiplied) by up to its length - 1.
    num_envs = graph.top_level.num_envs
    top_step = int(np.prod([level.steps_per_action for level in graph.levels]))
    assert 300 <= graph.env_steps <= 300 + 3 * (num_envs * top_step - 1)
    assert len(graph.evaluations) == 2 and all(e.rewards for e in graph.evaluations)
    assert (tmp_path / "progress.csv").read_text().count("\n") > 1


@pytest.mark.parametrize("name", ASYNCHRONOUS)
def test_asynchronous_preset_runs_briefly(name: str, tmp_path: Path) -> None:
    """Its workers (processes) act and learn within the budgets, their gradients reaching the
    shared weights this process evaluates."""
    preset = load_preset(name)
    roots = preset.graph_manager.parameters()
    for path, value in TINY.items():
        set_parameter(roots, path, value)
    graph = preset.graph_manager.create_graph(
        RunContext(seed=0, experiment_dir=tmp_path, quiet=True)
    )
    try:
        graph.improve()
        assert isinstance(graph, AsynchronousGraphManager)
        updates = graph.worker_updates()
    finally:
        graph.close()
    assert updates and all(count >= 1 for counts in updates.values() for count in counts.values())
    assert graph.agent.training_steps >= 1
    assert graph.env_steps == 300 and len(graph.evaluations) == 2
    assert (tmp_path / "progress.csv").read_text().count("\n") > 1


@pytest.mark.parametrize("name", BATCH)
def test_batch_preset_runs_an_epoch(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch preset learns one epoch from a small dataset recorded under its dataset's
    name (uniform random actions in its environment), its memory holding the dataset's
    transitions, then evaluates for an episode."""
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    preset = load_preset(name)
    graph = preset.graph_manager
    assert isinstance(graph, BatchRLGraphManager) and graph.batch_params.dataset_recipe
    record_random_dataset(graph, 600)
    roots = graph.parameters()
    set_parameter(roots, "schedule.improve_steps", "Epochs(1)")
    set_parameter(roots, "schedule.evaluation_steps", "EnvironmentEpisodes(1)")
    graph.create_graph(RunContext(seed=0, experiment_dir=tmp_path / "run", quiet=True))
    try:
        graph.improve()
    finally:
        graph.close()
    agent = graph.levels[0].agent
    assert graph.dataset is not None and graph.dataset.total_steps >= 600
    assert agent.memory is not None and len(agent.memory) == graph.dataset.total_steps
    assert graph.epoch == 1 and len(graph.evaluations) == 1
    assert agent.training_steps >= 1


def test_every_preset_promises_a_reward() -> None:
    for name in list_presets():
        validation = load_preset(name).validation
        assert validation is not None, f"{name} has no validation"
        assert validation.max_env_steps or validation.max_episodes or validation.max_epochs


def _improved(name: str, tmp_path: Path, overrides: dict[str, str]) -> GraphManager:
    """The preset's graph with ``overrides``, after its whole (shortened) run; the caller
    closes it."""
    preset = load_preset(name)
    roots = preset.graph_manager.parameters()
    for path, value in overrides.items():
        set_parameter(roots, path, value)
    graph = preset.graph_manager.create_graph(
        RunContext(seed=0, experiment_dir=tmp_path, quiet=True)
    )
    try:
        graph.improve()
    except BaseException:
        graph.close()
        raise
    return graph


ATARI_HEATUP, ATARI_TRAINING = 4000, 200
"""The Atari presets' steps in the default run: dozens of episodes of heatup through the frame
store, then 50 gradient steps of the Nature CNN."""


@pytest.mark.parametrize("name", ATARI)
def test_atari_preset_runs_4200_steps(name: str, tmp_path: Path) -> None:
    """Atari presets in the default run: 4,200 steps (4,000 of heatup, dozens of episodes
    through the frame store, then 200 of training, 50 gradient steps of the Nature CNN at
    about 70 ms each on one core), then 500 steps of evaluation (a whole game of an untrained
    agent can take 27,000)."""
    graph = _improved(
        name,
        tmp_path,
        {
            "schedule.heatup_steps": f"EnvironmentSteps({ATARI_HEATUP})",
            "schedule.improve_steps": f"EnvironmentSteps({ATARI_TRAINING})",
            "schedule.steps_between_evaluation_periods": f"EnvironmentSteps({ATARI_TRAINING})",
            "schedule.evaluation_steps": "EnvironmentSteps(500)",
        },
    )
    try:
        agent = graph.top_level.agent
        steps = ATARI_HEATUP + ATARI_TRAINING
        assert graph.env_steps == steps and agent.training_steps > 0
        assert agent.state["observation"].shape == (1, 4, 84, 84)
        assert len(agent.memory) == steps
        # Each frame stored once: no more frames than transitions and episode starts.
        frames = agent.memory.frame_stores["observation"]
        assert frames.written <= steps + agent.episodes + 1
        assert len(graph.evaluations) == 1 and graph.evaluations[0].env_steps == steps
    finally:
        graph.close()


@pytest.mark.parametrize("name", ATARI_ON_POLICY)
def test_atari_on_policy_preset_runs_5000_steps(name: str, tmp_path: Path) -> None:
    """On-policy Atari presets in the default run: 5,000 training steps (blocks of 8 copies
    x 128 steps: four updates, one epoch each to keep it short), then 400 steps of
    evaluation."""
    graph = _improved(
        name,
        tmp_path,
        {
            "schedule.improve_steps": "EnvironmentSteps(5000)",
            "schedule.steps_between_evaluation_periods": "EnvironmentSteps(5000)",
            "schedule.evaluation_steps": "EnvironmentSteps(400)",
            "agent.algorithm.epochs": "1",
        },
    )
    try:
        agent = graph.top_level.agent
        assert graph.env_steps >= 5000 and agent.training_rounds == 4
        assert agent.training_steps == 4 * 4  # 4 minibatches of 8 sequences of 32 steps
        if agent.policy.hidden:  # a single frame per step; the LSTM remembers
            assert agent.state["observation"].shape == (8, 84, 84)
            assert set(agent.policy.hidden.states) == {"main"}
        assert len(graph.evaluations) == 1
    finally:
        graph.close()


@pytest.mark.parametrize("name", list_presets())
def test_its_params_yaml_gives_back_the_parameters_a_checkpoint_records(
    name: str, tmp_path: Path
) -> None:
    """A resumed run compares its params.yaml with what its checkpoint trained with: for an
    unedited params.yaml they are the same, value for value."""
    preset = load_preset(name)
    write_params(tmp_path / "params.yaml", preset, 0, [])
    recorded = {"parameters": trained_parameters(preset.graph_manager.parameters())}
    again = load_run_preset(tmp_path / "params.yaml")
    assert parameter_changes(recorded, again.graph_manager.parameters()) == {}
