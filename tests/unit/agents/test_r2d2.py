"""R2D2 (coach/agents/r2d2.py): n-step targets within sequences by hand, successors valued
from the state after their step (a time limit's included), burn-in without gradient, the
stored hidden states agreeing with the learner's unroll, Double/Dueling heads, determinism."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from coach.agents.r2d2 import (
    R2D2Agent,
    R2D2AgentParameters,
    R2D2Learner,
    ended,
    n_step_targets,
)
from coach.core.action_masks import ACTION_MASK
from coach.core.recurrent_columns import EPISODE_START, hidden_key
from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentSteps
from coach.core.types import Batch
from coach.environments.parameters import GymEnvironmentParameters
from coach.filters.observation import ObservationSelectEntriesFilter
from coach.filters.pipeline import InputFilter
from coach.graph_managers.basic_rl import BasicRLGraphManager
from coach.graph_managers.parameters import RunContext, ScheduleParameters
from coach.memories.sequence_replay import SequenceReplayParameters
from coach.networks.heads import QHeadParameters
from coach.validation import InvalidParameter
from tests.toys import StaggeredEpisodes


def test_n_step_targets_by_hand() -> None:
    # One sequence of 5 steps; step 1 terminates, step 3 is truncated; gamma 0.5, n = 2.
    rewards = torch.tensor([[1.0], [2.0], [3.0], [4.0], [5.0]])
    terminated = torch.tensor([[False], [True], [False], [False], [False]])
    truncated = torch.tensor([[False], [False], [False], [True], [False]])
    successor = torch.tensor([[10.0], [99.0], [30.0], [40.0], [50.0]])
    targets = n_step_targets(rewards, terminated, terminated | truncated, successor, 0.5, 2, 1)
    expected = [
        2.0,  # step 1 terminates: its reward alone, no bootstrap (99 is never used)
        3 + 0.5 * 4 + 0.25 * 40,  # steps 2, 3; step 3 was cut: bootstraps from its successor
        4 + 0.5 * 40,  # step 3 alone (its episode ends there)
        5 + 0.5 * 50,  # the sequence's last step: a shorter window
    ]
    torch.testing.assert_close(targets[:, 0], torch.tensor(expected))


def params(dueling: bool = False, double_q: bool = True) -> R2D2AgentParameters:
    agent = R2D2AgentParameters()
    agent.memory = SequenceReplayParameters(max_size=2000, sequence_length=8, overlap=4)
    agent.algorithm.burn_in = 3
    agent.algorithm.n_step = 2
    agent.algorithm.batch_size = 4
    agent.algorithm.double_q = double_q
    agent.algorithm.num_consecutive_playing_steps = EnvironmentSteps(8)
    agent.algorithm.num_consecutive_training_steps = 2
    main = agent.network_wrappers["main"]
    main.middleware.recurrent.size = 8  # type: ignore[union-attr]
    main.middleware.scheme = [16]
    main.heads = [QHeadParameters(dueling=dueling)]
    return agent


def built(agent: R2D2AgentParameters, environment: StaggeredEpisodes) -> R2D2Agent:
    agent.validate()
    made = agent.agent_class()(
        agent, environment.observation_space, environment.action_space, environment.num_envs, seed=0
    )
    assert isinstance(made, R2D2Agent)
    return made


def collect(agent: R2D2Agent, environment: StaggeredEpisodes, steps: int) -> None:
    agent.phase = RunPhase.TRAIN
    agent.reset(environment.reset())
    for _ in range(steps):
        agent.observe(environment.step(agent.act().env_action))


def test_stored_hidden_states_agree_with_the_learners_unroll() -> None:
    environment = StaggeredEpisodes((3, 5, 7))
    agent = built(params(), environment)
    collect(agent, environment, 40)
    memory, net = agent.memory, agent.q_network
    assert memory is not None and memory.size > 6
    columns = memory.columns
    compared = 0
    with torch.no_grad():
        for slot in range(memory.size - 3):  # copies store together: slot + 3 is the next
            states = torch.as_tensor(columns[("state", "observation")][slot, :4, None])
            starts = torch.as_tensor(columns[("extras", EPISODE_START)][slot, :4, None])
            stored = torch.as_tensor(columns[("extras", hidden_key("main"))][slot])[None]
            _, after = net.unroll({"observation": states}, stored, starts)
            following = columns[("extras", hidden_key("main"))][slot + 3]
            if not columns[("extras", EPISODE_START)][slot + 3, 0]:  # else it starts at zero
                np.testing.assert_allclose(after[0].numpy(), following, atol=1e-6)
                compared += 1
    assert compared >= 3


def sequences(agent: R2D2Agent, flagged: bool = True, masked: bool = False) -> Batch:
    """Two sequences of 6 steps by hand: copy 0's episode ends after step 2 without a
    terminal state (a time limit if ``flagged``, else a restart that only the start of a
    new episode at step 3 tells), copy 1's terminates at step 4. With ``masked``, the states
    carry action masks: one action legal in most, none in a few."""
    generator = torch.Generator().manual_seed(0)
    states = torch.randn(6, 2, 2, generator=generator)
    next_states = torch.cat([states[1:], torch.randn(1, 2, 2, generator=generator)])
    next_states[2, 0] = torch.tensor([7.0, -7.0])  # the cut episode's final observation
    observed = {"observation": states}
    next_observed = {"observation": next_states}
    if masked:
        masks = torch.nn.functional.one_hot(torch.randint(0, 2, (7, 2), generator=generator))
        masks[[1, 4, 6], [0, 1, 1]] = 0  # no legal action: every one counts
        observed[ACTION_MASK] = masks[:6].to(torch.int8)
        next_observed[ACTION_MASK] = masks[1:].to(torch.int8).clone()
        next_observed[ACTION_MASK][2, 0] = torch.tensor([1, 0])  # the cut episode's last
    truncated = torch.zeros(6, 2, dtype=torch.bool)
    truncated[2, 0] = flagged
    terminated = torch.zeros(6, 2, dtype=torch.bool)
    terminated[4, 1] = True
    starts = torch.zeros(6, 2, dtype=torch.bool)
    starts[3, 0] = starts[5, 1] = True
    return Batch(
        states=observed,
        actions=torch.zeros(6, 2, dtype=torch.int64),
        rewards=torch.ones(6, 2),
        next_states=next_observed,
        terminated=terminated,
        truncated=truncated,
        indices=torch.arange(2),
        weights=torch.ones(2),
        extras={
            EPISODE_START: starts,
            hidden_key("main"): torch.randn(2, 2, 1, 8, generator=generator),
        },
    )


@pytest.mark.parametrize("masked", [False, True], ids=["unmasked", "masked"])
@pytest.mark.parametrize("flagged", [True, False], ids=["time-limit", "restart"])
@pytest.mark.parametrize("double_q", [True, False])
def test_successors_are_valued_from_the_state_after_their_step(
    double_q: bool, flagged: bool, masked: bool
) -> None:
    agent = built(params(double_q=double_q), StaggeredEpisodes((3, 5)))
    learner = agent.learner
    assert isinstance(learner, R2D2Learner)
    net = agent.q_network
    with torch.no_grad():
        net.update_target(0.5)  # make the target differ from the online network
        for p in net.online.parameters():
            p.add_(0.1)
        b = sequences(agent, flagged, masked)
        torch.testing.assert_close(
            ended(b)[:, 0], torch.tensor([False, False, True, False, False, False])
        )
        burn = 1
        online_cuts: dict[int, torch.Tensor] = {}
        target_cuts: dict[int, torch.Tensor] = {}
        out, online_final = net.unroll(
            b.states, b.extras[hidden_key("main")], b.extras[EPISODE_START], online_cuts
        )
        target_out, target_final = net.target_unroll(
            b.states, b.extras[hidden_key("main")], b.extras[EPISODE_START], target_cuts
        )
        got = learner.successor_values(
            b, out["q"][burn:], target_out["q"], (online_cuts, online_final),
            (target_cuts, target_final),
        )  # fmt: skip
        # Step by step, by hand: each copy's state after each step, its successor's values.
        for copy in range(2):
            state = b.extras[hidden_key("main")][copy : copy + 1]
            online_state = target_state = state
            for t in range(6):
                if b.extras[EPISODE_START][t, copy]:
                    online_state = target_state = torch.zeros_like(state)
                x = {"observation": b.states["observation"][t : t + 1, copy : copy + 1]}
                _, online_state = net.unroll(x, online_state)
                _, target_state = net.target_unroll(x, target_state)
                if t < burn or b.terminated[t, copy]:
                    continue
                nxt = {"observation": b.next_states["observation"][t : t + 1, copy : copy + 1]}
                online_q = net.unroll(nxt, online_state)[0]["q"][0, 0]
                target_q = net.target_unroll(nxt, target_state)[0]["q"][0, 0]
                if masked:  # the successor's legal actions alone (all, where it has none)
                    legal = b.next_states[ACTION_MASK][t, copy].bool()
                    legal = legal if legal.any() else torch.ones_like(legal)
                    online_q = online_q.masked_fill(~legal, -torch.inf)
                    target_q = target_q.masked_fill(~legal, -torch.inf)
                value = target_q[online_q.argmax()] if double_q else target_q.max()
                torch.testing.assert_close(got[t, copy], value, atol=1e-5, rtol=0)


def test_burn_in_steps_get_no_gradient_and_no_loss() -> None:
    environment = StaggeredEpisodes((3, 5, 7))
    agent = built(params(), environment)
    collect(agent, environment, 40)
    learner = agent.learner
    assert isinstance(learner, R2D2Learner)
    online = agent.q_network.online
    calls: list[tuple[int, bool]] = []
    unroll = online.unroll

    def watched(inputs: dict[str, torch.Tensor], *args: Any, **kwargs: Any) -> Any:
        calls.append((len(inputs["observation"]), torch.is_grad_enabled()))
        return unroll(inputs, *args, **kwargs)

    online.unroll = watched  # type: ignore[method-assign]
    batch = agent.memory.sample(4)  # type: ignore[union-attr]
    learner.learn(batch)
    # The burn-in (3 steps) without gradient, the 5 learned-from steps with it; the rest
    # are the successors' extra steps, without gradient.
    assert calls[0] == (3, False) and calls[1] == (5, True)
    assert all(not grad for _, grad in calls[2:])


def test_parameters_are_checked() -> None:
    agent = params()
    agent.algorithm.burn_in = 8
    with pytest.raises(InvalidParameter, match=r"burn_in must be below memory\.sequence_length"):
        agent.validate()
    agent = params()
    agent.network_wrappers["main"].middleware.recurrent = None
    with pytest.raises(InvalidParameter, match="carries a hidden state"):
        agent.validate()


@pytest.mark.parametrize("dueling", [False, True], ids=["q", "dueling"])
def test_same_seed_same_numbers(dueling: bool) -> None:
    runs = []
    for seed in (1, 1, 2):
        agent = params(dueling=dueling)
        agent.input_filter = InputFilter(
            observation_filters={"observation": [ObservationSelectEntriesFilter([0, 2])]}
        )
        schedule = ScheduleParameters(heatup_steps=EnvironmentSteps(64))
        g = BasicRLGraphManager(
            agent, GymEnvironmentParameters(level="CartPole-v1", num_envs=2), schedule
        )
        g.create_graph(RunContext(seed=seed))
        g.heatup(EnvironmentSteps(64))
        g.train_and_act(EnvironmentSteps(64))
        learned = g.top_level.agent
        assert learned.training_steps == 16
        net = learned.networks["main"].online
        runs.append(torch.cat([p.detach().flatten() for p in net.parameters()]))
        g.close()
    assert torch.equal(runs[0], runs[1]) and not torch.equal(runs[0], runs[2])
