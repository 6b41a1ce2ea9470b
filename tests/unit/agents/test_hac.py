"""Unit tests for coach/agents/hac.py on a two-level hierarchy over PendulumWithGoals:
hindsight action transitions, subgoal testing (no exploration below, penalties for missed
subgoals), the clipped targets, and determinism."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from coach.agents.hac import HACAgent, HACAgentParameters
from coach.core.goals import GoalReward
from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps
from coach.environments.parameters import GymEnvironmentParameters
from coach.errors import CoachError
from coach.graph_managers.hrl import HACGraphManager, HierarchyParameters
from coach.graph_managers.parameters import RunContext, ScheduleParameters
from coach.level_manager import LevelGoals
from coach.memories.hierarchical_hindsight import HierarchicalHindsightExperienceReplayParameters
from coach.networks.parameters import InputEmbedderParameters
from coach.schedules import LinearSchedule

HORIZON = 5


def _agent(testing_rate: float, sets_goals: bool) -> HACAgentParameters:
    params = HACAgentParameters()
    if sets_goals:
        params.memory = HierarchicalHindsightExperienceReplayParameters()
    params.algorithm.subgoal_testing_rate = testing_rate
    params.algorithm.goal_reward = GoalReward(distance="max_abs", threshold=0.05)
    params.algorithm.batch_size = 8
    params.memory.hindsight_transitions_per_regular_transition = 0
    for network in params.network_wrappers.values():
        network.middleware.scheme = [16]
        keys = [
            "observation",
            "desired_goal",
            *(["action"] if "action" in network.input_embedders else []),
        ]
        network.input_embedders = {key: InputEmbedderParameters() for key in keys}
    return params


def _graph(
    testing_rate: float,
    tmp_path: Path,
    levels: list[HACAgentParameters] | None = None,
    seed: int = 0,
) -> HACGraphManager:
    schedule = ScheduleParameters(
        heatup_steps=EnvironmentSteps(0),
        improve_steps=EnvironmentSteps(200),
        steps_between_evaluation_periods=EnvironmentSteps(200),
        evaluation_steps=EnvironmentEpisodes(1),
    )
    hierarchy = HierarchyParameters(
        horizons=[HORIZON],
        goals=LevelGoals(goal_reward=GoalReward(distance="max_abs", threshold=0.05)),
    )
    graph = HACGraphManager(
        levels or [_agent(testing_rate, True), _agent(testing_rate, False)],
        GymEnvironmentParameters(level="coach/PendulumWithGoals-v0", kwargs={"time_limit": 40}),
        schedule,
        hierarchy,
    )
    return graph.create_graph(RunContext(seed=seed, experiment_dir=tmp_path, quiet=True))


def test_the_levels_join_the_hierarchy(tmp_path: Path) -> None:
    graph = _graph(0.0, tmp_path)
    top, bottom = graph.top_level.agent, graph.levels[0].agent
    assert isinstance(top, HACAgent) and isinstance(bottom, HACAgent)
    assert top.sets_goals and top.learner.value_floor is None and top.subgoal_penalty == -HORIZON
    assert not bottom.sets_goals and bottom.learner.value_floor == -HORIZON
    graph.close()


@pytest.mark.parametrize("top_sets_goals, bottom_sets_goals", [(False, False), (True, True)])
def test_a_memory_that_does_not_fit_the_level_is_refused(
    tmp_path: Path, top_sets_goals: bool, bottom_sets_goals: bool
) -> None:
    levels = [_agent(0.0, top_sets_goals), _agent(0.0, bottom_sets_goals)]
    which = "sets subgoals" if not top_sets_goals else "the bottom level"
    with pytest.raises(CoachError, match=which):
        _graph(0.0, tmp_path, levels)


def test_upper_levels_store_the_subgoal_reached_as_their_action(tmp_path: Path) -> None:
    graph = _graph(0.0, tmp_path)
    graph.train_and_act(EnvironmentSteps(120))  # 3 episodes of 40 steps
    memory = graph.top_level.agent.memory
    assert memory is not None and len(memory) == 3 * 40 // HORIZON
    batch = memory.get(np.arange(len(memory)))
    np.testing.assert_allclose(batch.actions, batch.next_states["achieved_goal"], rtol=1e-6)
    graph.close()


def test_subgoal_tests_turn_exploration_off_below_and_penalize_misses(tmp_path: Path) -> None:
    graph = _graph(1.0, tmp_path)
    top_level, bottom_level = graph.top_level, graph.levels[0]
    explored = []
    act = bottom_level.agent.act

    def recording_act():  # type: ignore[no-untyped-def]
        explored.append(bottom_level.agent.policy.explore)
        return act()

    bottom_level.agent.act = recording_act  # type: ignore[method-assign]
    graph.train_and_act(EnvironmentSteps(80))
    assert explored and not any(explored)  # every subgoal tested: no exploration below
    memory = top_level.agent.memory
    assert memory is not None
    batch = memory.get(np.arange(len(memory)))
    penalties = batch.rewards == -HORIZON
    # Random subgoals are missed: each is stored proposed, penalized, without bootstrap,
    # besides its hindsight action transition.
    assert penalties.sum() > 0 and np.all(batch.terminated[penalties])
    assert not np.allclose(batch.actions[penalties], batch.next_states["achieved_goal"][penalties])
    graph.close()


def test_targets_are_clipped_to_the_returns_of_the_horizon(tmp_path: Path) -> None:
    graph = _graph(0.0, tmp_path)
    bottom = graph.levels[0].agent
    assert isinstance(bottom, HACAgent)
    with torch.no_grad():
        for critic in bottom.learner.critics.networks:
            critic.target.heads[0].linear.bias.fill_(-100.0)  # type: ignore[union-attr]
    space = bottom.observation_space
    states = {
        k: torch.as_tensor(np.stack([s.sample() for _ in range(4)])) for k, s in space.items()
    }
    assert torch.all(bottom.learner.bootstrap_values(states) == -HORIZON)
    graph.close()


def test_same_seed_same_numbers(tmp_path: Path) -> None:
    """Two runs on one seed: the same transitions stored, weights and evaluation at every
    level; another seed: other ones."""
    runs = []
    for i, seed in enumerate((0, 0, 1)):
        graph = _graph(0.3, tmp_path / str(i), seed=seed)
        graph.improve()
        graph.close()
        agents = [level.agent for level in graph.levels]
        assert all(agent.training_steps > 0 for agent in agents)
        stored = []
        for agent in agents:
            assert agent.memory is not None
            batch = agent.memory.get(np.arange(len(agent.memory)))
            stored += [batch.states["observation"], batch.actions, batch.rewards]
        weights = [
            p.detach().clone()
            for agent in agents
            for network in agent.networks.values()
            for p in network.online.parameters()
        ]
        runs.append(([e.rewards for e in graph.evaluations], stored, weights))
    (rewards, stored, weights), (rewards_b, stored_b, weights_b), other = runs
    assert rewards == rewards_b
    for a, b in zip(stored, stored_b, strict=True):
        np.testing.assert_array_equal(a, b)
    assert all(torch.equal(a, b) for a, b in zip(weights, weights_b, strict=True))
    assert not np.array_equal(stored[0], other[1][0])
    assert not all(torch.equal(a, b) for a, b in zip(weights, other[2], strict=True))


@pytest.mark.parametrize(("clock", "length"), [("env_steps", 400), ("episodes", 10)])
def test_every_levels_learning_rate_follows_the_environments_clock(
    tmp_path: Path, clock: str, length: int
) -> None:
    # Run down over 400 env steps (10 episodes of 40): after 200 steps (5 episodes) every
    # level learns at half its rate, though the top level has acted 40 times and the bottom
    # one has finished some 40 subgoal attempts.
    levels = [_agent(0.0, True), _agent(0.0, False)]
    for params in levels:
        params.algorithm.learning_rate_decay = LinearSchedule(1.0, 0.0, length)
        params.algorithm.learning_rate_clock = clock
    graph = _graph(0.0, tmp_path, levels)
    graph.train_and_act(EnvironmentSteps(200))
    top, bottom = graph.top_level.agent, graph.levels[0].agent
    assert bottom.training_env_steps == 200 and top.episodes == 5
    assert top.training_env_steps == 200 // HORIZON and bottom.episodes >= 200 // HORIZON
    for agent, params in ((top, levels[0]), (bottom, levels[1])):
        for name, network in agent.networks.items():
            if network.optimizer is None:
                continue
            own_rate = params.network_wrappers[name].learning_rate
            factor = network.optimizer.param_groups[0]["lr"] / own_rate
            # Set before the level's last round: at most a top level's action (5 steps) or
            # an episode earlier.
            assert 0.5 <= factor <= 0.5 + max(HORIZON, 1) / length + 1e-9
    # On its own count, the level whose count differs would be far from half its rate: the
    # top level at 0.9 of it after its 40 steps, the bottom one at 0 after its 40 attempts.
    apart = top if clock == "env_steps" else bottom
    assert abs(max(0.0, 1 - apart.clock().count(clock) / length) - 0.5) > 0.3
    graph.close()
