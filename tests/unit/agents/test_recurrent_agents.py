"""Recurrent on-policy agents: the hidden state per env copy (zeroed exactly where each
copy's episodes start, stored with every step, kept in checkpoints, fresh after an
evaluation), the learner replaying stored sequences to the numbers acting gave, parameter
checks, and determinism."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest
import torch
from gymnasium import spaces

from coach.agents.actor_critic import ActorCriticAgentParameters
from coach.agents.agent import Agent
from coach.agents.clipped_ppo import ClippedPPOAgentParameters
from coach.agents.ddpg import DDPGAgentParameters
from coach.agents.on_policy import OnPolicyAgentParameters, actor_critic_networks
from coach.agents.on_policy_learning import OnPolicyLearner
from coach.agents.ppo import PPOAgentParameters
from coach.core.recurrent_columns import EPISODE_START, hidden_key, next_hidden_key
from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps
from coach.environments.parameters import GymEnvironmentParameters
from coach.errors import CoachError
from coach.filters.observation import ObservationSelectEntriesFilter
from coach.filters.pipeline import InputFilter
from coach.graph_managers.basic_rl import BasicRLGraphManager
from coach.graph_managers.parameters import RunContext, ScheduleParameters
from coach.memories.rollout import RolloutParameters
from coach.networks.heads import CategoricalPolicyHeadParameters, VHeadParameters
from coach.networks.parameters import MiddlewareParameters, NetworkParameters, RecurrentParameters
from coach.validation import InvalidParameter
from tests.toys import StaggeredEpisodes

LENGTHS = (3, 5, 7)


def recurrent(
    params: OnPolicyAgentParameters, cell: str = "lstm", shared: bool = False
) -> OnPolicyAgentParameters:
    """``params`` with small recurrent networks: an actor and a critic, or one shared."""
    layer = RecurrentParameters(cell=cell, size=8)
    if shared:
        params.network_wrappers = {
            "main": NetworkParameters(
                middleware=MiddlewareParameters(scheme=[16], recurrent=layer),
                heads=[CategoricalPolicyHeadParameters(), VHeadParameters()],
            )
        }
    else:
        params.network_wrappers = actor_critic_networks(
            CategoricalPolicyHeadParameters(), 1e-3, scheme=[16], recurrent=layer
        )
    return params


def clipped_ppo(rollout_length: int = 16, **kwargs: Any) -> ClippedPPOAgentParameters:
    params = ClippedPPOAgentParameters()
    params.memory = RolloutParameters(rollout_length=rollout_length)
    params.algorithm.batch_size = 16
    params.algorithm.sequence_length = 8
    params.algorithm.epochs = 2
    recurrent(params, **kwargs)
    return params


def built(params: OnPolicyAgentParameters, environment: StaggeredEpisodes, seed: int = 0) -> Agent:
    params.validate()
    return params.agent_class()(
        params,
        environment.observation_space,
        environment.action_space,
        environment.num_envs,
        seed=seed,
    )


def steps(agent: Agent, environment: StaggeredEpisodes, count: int) -> list[dict[str, np.ndarray]]:
    """Act and observe ``count`` steps from fresh episodes; the stored extras of each."""
    agent.phase = RunPhase.TRAIN
    agent.reset(environment.reset())
    stored = []
    for _ in range(count):
        info = agent.act()
        stored.append(info.memory_extras)
        agent.observe(environment.step(info.env_action))
    return stored


@pytest.mark.parametrize("shared", [False, True], ids=["actor-critic", "shared"])
@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_the_state_is_zeroed_exactly_where_each_copys_episodes_start(
    cell: str, shared: bool
) -> None:
    environment = StaggeredEpisodes(LENGTHS)
    agent = built(clipped_ppo(rollout_length=32, cell=cell, shared=shared), environment)
    names = ["main"] if shared else ["actor", "critic"]
    stored = steps(agent, environment, 22)
    for t, extras in enumerate(stored):
        expected = np.array([t % length == 0 for length in LENGTHS])
        np.testing.assert_array_equal(extras[EPISODE_START], expected)
        for name in names:
            before = extras[hidden_key(name)].reshape(len(LENGTHS), -1)
            np.testing.assert_array_equal(np.all(before == 0, axis=1), expected)
            if t:  # a copy goes on from the state its previous step left
                carried = stored[t - 1][next_hidden_key(name)].reshape(len(LENGTHS), -1)
                np.testing.assert_array_equal(before[~expected], carried[~expected])


@pytest.mark.parametrize("shared", [False, True], ids=["actor-critic", "shared"])
@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_the_learner_replays_stored_sequences_to_what_acting_gave(cell: str, shared: bool) -> None:
    environment = StaggeredEpisodes(LENGTHS)
    agent = built(clipped_ppo(cell=cell, shared=shared), environment)
    steps(agent, environment, 16)  # one full block, not learned from yet
    learner = agent.learner
    assert isinstance(learner, OnPolicyLearner) and learner.rollout.full
    learner.compute_advantages()
    sequences = 0
    with torch.no_grad():
        for minibatch in learner.minibatches():
            assert minibatch.rewards.shape == (8, 2)  # sequences of 8 steps, 2 a minibatch
            view = learner.evaluate(minibatch)
            torch.testing.assert_close(
                view.log_prob, view.rows.extras["log_prob"], atol=1e-5, rtol=0
            )
            torch.testing.assert_close(view.values, view.rows.extras["value"], atol=1e-5, rtol=0)
            sequences += 2
    assert sequences == 2 * len(LENGTHS)  # each column cut in two, every sequence once
    # A step's successor is valued from the state after the step: where the episode goes
    # on, that is the value acting gave the next step.
    columns = learner.rollout.columns
    t, b = np.nonzero(~columns["extras"][EPISODE_START][1:])
    np.testing.assert_allclose(
        learner.successor_values(t, b), columns["extras"]["value"][t + 1, b], atol=1e-5
    )


def test_the_hidden_state_round_trips_through_a_checkpoint() -> None:
    environment = StaggeredEpisodes(LENGTHS)
    agent = built(clipped_ppo(rollout_length=32), environment)
    steps(agent, environment, 4)
    buffer = io.BytesIO()
    torch.save(agent.state_dict(), buffer)
    restored = built(clipped_ppo(rollout_length=32), StaggeredEpisodes(LENGTHS), seed=9)
    buffer.seek(0)
    restored.load_state_dict(torch.load(buffer, weights_only=False))
    for name, state in agent.policy.hidden.states.items():
        assert torch.equal(restored.policy.hidden.states[name], state)
        assert state.abs().sum() > 0
    np.testing.assert_array_equal(restored.policy.hidden.starting, agent.policy.hidden.starting)
    restored.phase = agent.phase
    a, b = agent.act(), restored.act()
    np.testing.assert_array_equal(a.action, b.action)
    for key, value in a.memory_extras.items():
        np.testing.assert_array_equal(b.memory_extras[key], value)


def novel_graph(params: OnPolicyAgentParameters, seed: int) -> BasicRLGraphManager:
    params.input_filter = InputFilter(
        observation_filters={"observation": [ObservationSelectEntriesFilter([0, 2])]}
    )
    environment = GymEnvironmentParameters(level="CartPole-v1", num_envs=2)
    g = BasicRLGraphManager(
        params, environment, ScheduleParameters(heatup_steps=EnvironmentSteps(0))
    )
    g.create_graph(RunContext(seed=seed))
    return g


def test_an_evaluation_starts_fresh_episodes_and_training_goes_on_from_fresh_ones() -> None:
    g = novel_graph(clipped_ppo(rollout_length=32), 0)
    agent = g.top_level.agent
    g.train_and_act(EnvironmentSteps(10))
    rollout = agent.memory
    hidden = agent.policy.hidden
    assert not hidden.starting.any() and rollout.steps == 5  # type: ignore[union-attr]
    seen: list[np.ndarray] = []
    act = agent.policy.act

    def watch(state: Any, phase: RunPhase) -> Any:
        if phase is RunPhase.EVALUATE and not seen:
            seen.append(hidden.starting.copy())
        return act(state, phase)

    agent.policy.act = watch  # type: ignore[method-assign]
    g.evaluate(EnvironmentEpisodes(2))
    assert seen and seen[0].all()  # the evaluation's first step: fresh states in every copy
    g.train_and_act(EnvironmentSteps(2))
    starts = rollout.columns["extras"][EPISODE_START]  # type: ignore[union-attr]
    assert starts[5].all() and not starts[1:5].any()
    g.close()


@pytest.mark.parametrize(
    "params_class", [ClippedPPOAgentParameters, PPOAgentParameters, ActorCriticAgentParameters]
)
def test_same_seed_same_numbers(params_class: type[OnPolicyAgentParameters]) -> None:
    runs = []
    for seed in (1, 1, 2):
        params = recurrent(params_class(), cell="gru")
        params.memory = RolloutParameters(rollout_length=16)
        params.algorithm.batch_size = 16
        g = novel_graph(params, seed)
        g.train_and_act(EnvironmentSteps(96))  # 3 blocks of 16 x 2
        agent = g.top_level.agent
        assert agent.training_rounds == 3
        nets = [agent.networks[name].online for name in ("actor", "critic")]
        runs.append(torch.cat([p.detach().flatten() for net in nets for p in net.parameters()]))
        g.close()
    assert torch.equal(runs[0], runs[1]) and not torch.equal(runs[0], runs[2])


def test_sequences_must_tile_the_block_and_fill_the_minibatches() -> None:
    params = clipped_ppo()
    params.algorithm.sequence_length = 5
    with pytest.raises(InvalidParameter, match=r"must divide memory\.rollout_length"):
        params.validate()
    params.algorithm.sequence_length = 8
    params.algorithm.batch_size = 12
    with pytest.raises(InvalidParameter, match="multiple of the sequence length"):
        params.validate()


def test_an_agent_that_learns_feed_forward_networks_refuses_a_recurrent_one() -> None:
    params = DDPGAgentParameters()
    params.network_wrappers["critic"].middleware.recurrent = RecurrentParameters()
    space = spaces.Dict({"observation": spaces.Box(-1, 1, (3,), np.float32)})
    with pytest.raises(CoachError, match=r"feed-forward networks only.*\['critic'\]"):
        params.agent_class()(params, space, spaces.Box(-1, 1, (1,), np.float32), 1, seed=0)
