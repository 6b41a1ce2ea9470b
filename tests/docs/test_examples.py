"""The guide's examples do what their pages say (the README's, once; now on the docs pages).

`tests.docs.test_code_blocks` runs every block; these tests check what a few of them promise.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

from coach import (
    BasicRLGraphManager,
    DQNAgentParameters,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    ScheduleParameters,
)
from coach.graph_managers.graph_manager import GraphManager
from coach.graph_managers.parameters import RunContext
from coach.presets import load_preset
from tests.docs.blocks import every_block


def _blocks(language: str) -> list[str]:
    """Every block of ``language`` on the README and the hand-written docs pages, without the
    ``# file: NAME`` line a page may start one with."""
    return [re.sub(r"\A# file: \S+\n", "", b.text) for b in every_block(language)]


def _block(language: str, start: str) -> str:
    """The one example that starts with ``start`` (shown on several pages, the same text)."""
    (block,) = {b for b in _blocks(language) if b.startswith(start)}
    return block


def test_the_acrobot_preset_examples_load(tmp_path: Path) -> None:
    examples = [b for b in _blocks("python") if 'level="Acrobot-v1"' in b and "graph_manager" in b]
    assert len(examples) >= 2  # the README's first preset, and the presets page's
    for index, text in enumerate(examples):
        path = tmp_path / f"Acrobot_DQN_{index}.py"
        path.write_text(text)
        preset = load_preset(str(path))
        assert preset.graph_manager.parameters()["environment"].level == "Acrobot-v1"
        assert preset.validation is not None


def test_every_yaml_example_names_a_preset() -> None:
    documents = [yaml.safe_load(b) for b in _blocks("yaml") if b.startswith("preset: ")]
    # A shipped preset by name (a page's own preset file is run with its page's blocks).
    documents = [d for d in documents if not d["preset"].endswith((".py", ".yaml", ".yml"))]
    assert len(documents) >= 2  # Studies' and Coming from SB3's, at least
    for document in documents:
        assert load_preset(document["preset"]).name == document["preset"]


def test_the_search_space_example_checks_on_its_preset() -> None:
    from coach.studies.search_space import check_space, parse_space

    space = parse_space(yaml.safe_load(_block("yaml", "parameters:")), "space.yaml")
    assert [d.kind for d in space.dimensions] == ["float", "categorical", "int"]
    check_space(space, load_preset("CartPole_DQN").graph_manager, "space.yaml")


def test_the_filter_example_runs_dqn_on_a_continuous_environment(tmp_path: Path) -> None:
    agent = DQNAgentParameters()
    exec(_block("python", "from coach import InputFilter"), {"agent": agent})
    graph = BasicRLGraphManager(
        agent,
        GymEnvironmentParameters(level="Pendulum-v1"),
        ScheduleParameters(
            heatup_steps=EnvironmentSteps(100),
            improve_steps=EnvironmentSteps(200),
            steps_between_evaluation_periods=EnvironmentSteps(200),
            evaluation_steps=EnvironmentEpisodes(1),
        ),
    ).create_graph(RunContext(seed=0, experiment_dir=tmp_path, quiet=True))
    try:
        graph.improve()
        assert graph.top_level.agent.action_space.n == 9
    finally:
        graph.close()


@contextmanager
def _built(start: str, name: str, directory: Path) -> Iterator[GraphManager]:
    """The preset example that starts with ``start``, saved as ``name``, loaded and built."""
    path = directory / name
    path.write_text(_block("python", start))
    graph = load_preset(str(path)).graph_manager
    graph.create_graph(RunContext(seed=0, experiment_dir=directory, quiet=True))
    try:
        yield graph
    finally:
        graph.close()


def test_the_recurrent_example_trains_a_gru_on_cartpole_without_velocities(tmp_path: Path) -> None:
    start = "from coach import (\n    BasicRLGraphManager,\n    ClippedPPO"
    with _built(start, "CartPoleNoVel_GRU.py", tmp_path) as graph:
        roots = graph.parameters()
        assert roots["agent"].network_wrappers["actor"].middleware.recurrent.cell == "gru"
        graph.train_and_act(EnvironmentSteps(1024))  # two blocks of 64 x 8
        agent = graph.top_level.agent
        assert agent.observation_space["observation"].shape == (2,)
        assert agent.training_rounds == 2 and set(agent.policy.hidden.states) == {"actor", "critic"}


def test_the_multi_agent_example_puts_dqn_and_clipped_ppo_on_simple_tag(tmp_path: Path) -> None:
    start = "from coach import (\n    ClippedPPOAgentParameters,\n    DQN"
    with _built(start, "SimpleTag_Mixed.py", tmp_path) as graph:
        graph.heatup(EnvironmentSteps(1000))
        graph.train_and_act(EnvironmentSteps(2000))
        agents = graph.top_level.agents
        assert agents["predators"].num_envs == 12 and agents["prey"].num_envs == 4
        assert agents["predators"].training_steps > 0 and agents["prey"].training_steps > 0
