"""ACER (coach/agents/acer.py, acer_learning.py, coach/memories/acer_replay.py): Retrace
targets, the truncated importance weights and the bias correction by hand, the trust
region's projection and its bound on an update, the average network's moves, acting with mu
kept, the replay of the blocks' segments, the on-/off-policy rhythm, refusals, checkpoints
and determinism."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import torch
from gymnasium import spaces

import coach.agents.acer_learning as acer_learning
from coach.agents.acer import ACERAgent, ACERAgentParameters, acer_network
from coach.agents.acer_learning import (
    bias_correction_weights,
    policy_gain,
    retrace_targets,
    trust_region_step,
)
from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentSteps
from coach.core.types import Batch, Transition
from coach.environments.parameters import GymEnvironmentParameters
from coach.errors import CoachError
from coach.graph_managers.basic_rl import BasicRLGraphManager
from coach.graph_managers.parameters import RunContext, ScheduleParameters
from coach.memories.acer_replay import ACERReplay
from coach.networks.heads import QHeadParameters
from coach.validation import InvalidParameter
from tests.unit.agents.seeded import after_run, main_weights, short_schedule

OBSERVATIONS = spaces.Dict({"observation": spaces.Box(-1.0, 1.0, (4,), np.float32)})
ACTIONS = spaces.Discrete(3)


def _params() -> ACERAgentParameters:
    params = ACERAgentParameters()
    params.network_wrappers["main"] = acer_network([16], 1e-3)
    params.algorithm.batch_size = 4
    params.algorithm.num_transitions_to_start_replay = 20
    params.memory.segment_length = 5  # type: ignore[union-attr]
    params.memory.max_size = 100  # type: ignore[union-attr]
    return params


def _agent(params: ACERAgentParameters | None = None, seed: int = 0) -> ACERAgent:
    agent = ACERAgent(params or _params(), OBSERVATIONS, ACTIONS, 2, seed=seed)
    agent.phase = RunPhase.TRAIN
    return agent


def _segments(steps: int = 4, count: int = 3, seed: int = 0) -> Batch:
    """Time-major segments (T, N) of random states, actions and behaviour probabilities."""
    rng = np.random.default_rng(seed)
    terminated = np.zeros((steps, count), dtype=bool)
    terminated[1, 0] = True
    truncated = np.zeros((steps, count), dtype=bool)
    truncated[0, 1] = True
    return Batch(
        states={"observation": rng.uniform(-1, 1, (steps, count, 4)).astype(np.float32)},
        actions=rng.integers(0, 3, (steps, count)),
        rewards=rng.standard_normal((steps, count)).astype(np.float32),
        next_states={"observation": rng.uniform(-1, 1, (steps, count, 4)).astype(np.float32)},
        terminated=terminated,
        truncated=truncated,
        extras={"mu": rng.dirichlet(np.ones(3), (steps, count)).astype(np.float32)},
    )


def test_retrace_targets_by_hand() -> None:
    # One segment of 4 steps: the episode terminates after step 1, a new one starts at
    # step 2 and runs past the segment, which bootstraps from V(s') = 5 of its last step.
    column = torch.tensor
    rewards = column([1.0, 2.0, 3.0, 4.0])[:, None]
    q_taken = column([0.5, 1.0, 1.5, 2.0])[:, None]
    values = column([0.4, 0.8, 1.2, 1.6])[:, None]
    rho_bar = column([1.0, 0.5, 0.25, 1.0])[:, None]
    ended = column([False, True, False, False])[:, None]
    successor = column([0.0, 0.0, 0.0, 5.0])[:, None]
    q_ret = retrace_targets(rewards, q_taken, values, rho_bar, ended, successor, 0.9)
    q3 = 4 + 0.9 * 5  # the bootstrap: 8.5
    q2 = 3 + 0.9 * (1.0 * (q3 - 2.0) + 1.6)  # 10.29
    q1 = 2.0  # terminal: nothing after it
    q0 = 1 + 0.9 * (0.5 * (q1 - 1.0) + 0.8)  # 2.17
    torch.testing.assert_close(q_ret[:, 0], column([q0, q1, q2, q3]))
    # A time limit after step 1 instead: Q_ret restarts from V of its own next state (7).
    cut = retrace_targets(
        rewards, q_taken, values, rho_bar, ended, column([0, 7.0, 0, 5])[:, None], 0.9
    )
    assert cut[1, 0].item() == pytest.approx(2 + 0.9 * 7)
    assert cut[0, 0].item() == pytest.approx(1 + 0.9 * (0.5 * (2 + 0.9 * 7 - 1.0) + 0.8))


@pytest.mark.parametrize("from_average", [False, True])
def test_the_learner_bootstraps_from_the_last_and_cut_steps_only(from_average: bool) -> None:
    params = _params()
    params.algorithm.bootstrap_from_average = from_average
    agent = _agent(params)
    main = agent.networks["main"]
    assert main.target is not None
    with torch.no_grad():  # the average network's Q-values apart from the network's
        for p in main.target.parameters():
            p.add_(0.3)
    b = _segments().map(torch.as_tensor)
    values = agent.learner.successor_values(b)  # type: ignore[union-attr]
    with torch.no_grad():
        states = {"observation": b.next_states["observation"].flatten(0, 1)}
        out = main(states)
        q = main.target_predict(states)["q"] if from_average else out["q"]
        v = (torch.softmax(out["policy"], 1) * q).sum(1).view(4, 3)  # V = sum pi Q
    expected = torch.zeros(4, 3)
    expected[-1] = v[-1]  # every segment's last step
    expected[0, 1] = v[0, 1]  # the time limit in the second segment
    torch.testing.assert_close(values, expected)  # 0 after segment 0's terminal step 1


@pytest.mark.parametrize("from_average", [False, True])
def test_the_q_head_regresses_on_retrace_targets(from_average: bool) -> None:
    params = _params()
    params.algorithm.bootstrap_from_average = from_average
    agent = _agent(params)
    main = agent.networks["main"]
    assert main.target is not None
    with torch.no_grad():
        for p in main.target.parameters():
            p.add_(0.3)
    batch = _segments()
    b = batch.map(torch.as_tensor)
    with torch.no_grad():
        states = {"observation": b.states["observation"].flatten(0, 1)}
        out = main(states)
        pi = torch.softmax(out["policy"], 1)
        critic = main.target_predict(states)["q"] if from_average else out["q"]
        actions = b.actions.flatten().long()[:, None]
        rho_bar = (pi / b.extras["mu"].flatten(0, 1)).gather(1, actions).clamp(max=1)
        q_ret = retrace_targets(
            b.rewards, critic.gather(1, actions).view(4, 3), (pi * critic).sum(1).view(4, 3),
            rho_bar.view(4, 3), b.terminated | b.truncated,
            agent.learner.successor_values(b), 0.99,  # type: ignore[union-attr]
        ).flatten()  # fmt: skip
        expected = (out["q"].gather(1, actions).squeeze(1) - q_ret).square().mean()
    losses = agent.learner.learn(batch)  # type: ignore[union-attr]
    assert float(losses["q_loss"]) == pytest.approx(expected.item(), rel=1e-4)


def test_truncated_importance_weights_and_bias_correction_by_hand() -> None:
    # pi = (0.8, 0.2), mu = (0.05, 0.95): rho = (16, 0.2105); c = 10.
    pi = torch.tensor([[0.8, 0.2]])
    rho = pi / torch.tensor([[0.05, 0.95]])
    weights = bias_correction_weights(rho, pi, 10.0)
    # [1 - 10/16]_+ 0.8 = 0.3 for action 0; action 1's rho is below c: no correction.
    torch.testing.assert_close(weights, torch.tensor([[0.3, 0.0]]), atol=1e-5, rtol=0)
    q_values, value, q_ret = torch.tensor([[2.0, -1.0]]), torch.tensor([1.4]), torch.tensor([3.0])
    phi = pi.clone().requires_grad_()
    truncated, correction = policy_gain(phi, torch.tensor([[0]]), rho, q_ret, q_values, value, 10.0)
    # The action taken, 0: min(10, 16) log 0.8 (3 - 1.4); the correction: 0.3 log 0.8 (2 - 1.4).
    assert truncated.item() == pytest.approx(10 * np.log(0.8) * 1.6, rel=1e-5)
    assert correction.item() == pytest.approx(0.3 * np.log(0.8) * 0.6, rel=1e-4)
    (g,) = torch.autograd.grad((truncated + correction).sum(), phi)
    torch.testing.assert_close(g, torch.tensor([[(16 + 0.18) / 0.8, 0.0]]), rtol=1e-4, atol=1e-4)
    # Action 1 taken (rho 0.21 < c): its own weight, rho itself.
    truncated, _ = policy_gain(phi, torch.tensor([[1]]), rho, q_ret, q_values, value, 10.0)
    assert truncated.item() == pytest.approx(0.2 / 0.95 * np.log(0.2) * 1.6, rel=1e-4)


def test_the_trust_region_step_by_hand_and_its_bound() -> None:
    # k^T g = 1 > delta = 0.2: z = g - (1 - 0.2) / 2 k = (0.6, -0.4), and k^T z = 0.2.
    z = trust_region_step(torch.tensor([[1.0, 0.0]]), torch.tensor([[1.0, 1.0]]), 0.2)
    torch.testing.assert_close(z, torch.tensor([[0.6, -0.4]]))
    g, k = torch.randn(64, 3), torch.randn(64, 3)
    z = trust_region_step(g, k, 0.1)
    inside = (k * g).sum(1) <= 0.1
    assert inside.any() and (~inside).any()
    torch.testing.assert_close(z[inside], g[inside])  # already within the bound: as it was
    assert ((k * z).sum(1) <= 0.1 + 1e-5).all()


def _kl_before_and_after_an_update(trust_region: bool) -> tuple[float, float, torch.Tensor]:
    """KL(pi_avg || pi) on a batch before and after one update of an agent whose average
    network was moved away from it, and k = -pi_avg / pi before it, the gradient of that KL
    with respect to pi's probabilities; Adam with an epsilon far above the gradients takes plain
    gradient steps (learning rate / epsilon times the gradient)."""
    params = _params()
    params.algorithm.trust_region = trust_region
    params.algorithm.max_KL_divergence = 1e-4
    params.algorithm.q_loss_weight = 0.0
    main = params.network_wrappers["main"]
    main.adam_epsilon, main.learning_rate, main.gradient_clip_norm = 1e3, 1e2, None
    agent = _agent(params)
    net = agent.networks["main"]
    generator = torch.Generator().manual_seed(5)
    assert net.target is not None
    with torch.no_grad():
        for p in net.target.parameters():
            p.add_(0.5 * torch.randn(p.shape, generator=generator))
    batch = _segments(steps=5, count=8)
    states = {"observation": torch.as_tensor(batch.states["observation"]).flatten(0, 1)}

    def kl() -> tuple[float, torch.Tensor]:
        with torch.no_grad():
            average = torch.softmax(net.target_predict(states)["policy"], 1)
            pi = torch.softmax(net(states)["policy"], 1)
        return (average * (average.log() - pi.log())).sum(1).mean().item(), -average / pi

    before, k = kl()
    params.algorithm.avg_network_decay = 1.0  # the average stays where it was
    agent.learner.learn(batch)  # type: ignore[union-attr]
    return before, kl()[0], k


def test_the_trust_region_bounds_the_linearised_kl_and_shrinks_the_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spy: list[tuple[torch.Tensor, ...]] = []

    def projected(g: torch.Tensor, k: torch.Tensor, delta: float) -> torch.Tensor:
        z = trust_region_step(g, k, delta)
        spy.append((g, k, z))
        return z

    monkeypatch.setattr(acer_learning, "trust_region_step", projected)
    start, bounded, expected_k = _kl_before_and_after_an_update(True)
    same_start, free, _ = _kl_before_and_after_an_update(False)
    ((g, k, z),) = spy  # only the update in the trust region projects
    torch.testing.assert_close(k, expected_k, rtol=1e-4, atol=1e-6)
    bites = (k * g).sum(1) > 1e-4
    assert bites.any()  # the bound bites on some rows...
    assert ((k * z).sum(1) <= 1e-4 + 1e-5).all()  # ...and holds on every one after
    assert (z.norm(dim=1)[bites] < g.norm(dim=1)[bites]).all()  # a shorter step there
    # The new policy ends nearer the average one than the unconstrained update leaves it.
    assert start == same_start and bounded < free


def test_the_average_network_moves_by_its_decay() -> None:
    params = _params()
    params.algorithm.avg_network_decay = 0.9
    agent = _agent(params)
    net = agent.networks["main"]
    assert net.target is not None
    with torch.no_grad():
        for p in net.target.parameters():
            p.mul_(0.5)
    old = [p.detach().clone() for p in net.target.parameters()]
    agent.learner.learn(_segments())  # type: ignore[union-attr]
    for average, before, online in zip(
        net.target.parameters(), old, net.online.parameters(), strict=True
    ):
        torch.testing.assert_close(average, 0.9 * before + 0.1 * online.detach())


def test_acting_samples_pi_and_keeps_it_as_mu() -> None:
    agent = _agent()
    state = {"observation": np.array([[0.1, -0.2, 0.3, 0.0], [0.5, 0.5, -0.5, 0.2]], np.float32)}
    with torch.no_grad():
        logits = agent.networks["main"]({"observation": torch.as_tensor(state["observation"])})[
            "policy"
        ]
    info = agent.policy.decide(state, RunPhase.TRAIN)
    np.testing.assert_allclose(
        info.memory_extras["mu"], torch.softmax(logits, 1).numpy(), rtol=1e-6
    )
    assert info.action.shape == (2,) and set(info.action) <= {0, 1, 2}
    greedy = agent.policy.decide(state, RunPhase.EVALUATE)
    np.testing.assert_array_equal(greedy.action, logits.argmax(1).numpy())


def test_the_replay_keeps_each_copys_column_as_a_segment() -> None:
    params = _params().memory
    replay = params.build(OBSERVATIONS, ACTIONS, np.random.default_rng(0),  # type: ignore[union-attr]
                          {"mu": spaces.Box(0, 1, (3,), np.float32)})  # fmt: skip
    assert isinstance(replay, ACERReplay) and replay.capacity == 20

    def step(t: int) -> Transition:  # copy b's observation at step t: (t, b, 0, 0)
        obs = np.array([[t, 0, 0, 0], [t, 1, 0, 0]], np.float32)
        mu = np.full((2, 3), 1 / 3, np.float32)
        done = np.zeros(2, dtype=bool)
        return Transition({"observation": obs}, np.array([0, 1]), np.array([t, -t], np.float32),
                           {"observation": obs + 1}, done, done, {"mu": mu})  # fmt: skip

    for t in range(5):
        replay.store(step(t))
    assert replay.full and replay.block_segments().rewards.shape == (5, 2)
    replay.retire_block()
    assert replay.replayed_steps == 10 and len(replay.block) == 0
    np.testing.assert_array_equal(
        replay.segments["rewards"][:2], [[0, 1, 2, 3, 4], [0, -1, -2, -3, -4]]
    )
    sample = replay.sample(6)
    assert sample.states["observation"].shape == (5, 6, 4) and sample.extras["mu"].shape == (
        5,
        6,
        3,
    )
    steps = np.broadcast_to(np.arange(5)[:, None], (5, 6))
    np.testing.assert_array_equal(sample.states["observation"][:, :, 0], steps)
    other = params.build(OBSERVATIONS, ACTIONS, np.random.default_rng(0),  # type: ignore[union-attr]
                         {"mu": spaces.Box(0, 1, (3,), np.float32)})  # fmt: skip
    other.load_state_dict(copy.deepcopy(replay.state_dict()))
    np.testing.assert_array_equal(other.segments["rewards"], replay.segments["rewards"])


def _graph(params: ACERAgentParameters, seed: int = 0) -> BasicRLGraphManager:
    environment = GymEnvironmentParameters(level="CartPole-v1", num_envs=2)
    g = BasicRLGraphManager(
        params, environment, ScheduleParameters(heatup_steps=EnvironmentSteps(0))
    )
    g.create_graph(RunContext(seed=seed))
    return g


def test_a_block_learns_on_policy_then_replays_once_the_replay_is_full_enough() -> None:
    params = _params()
    params.algorithm.poisson_replay = False
    params.algorithm.ratio_of_replay = 2
    g = _graph(params)
    agent = g.top_level.agent
    g.train_and_act(EnvironmentSteps(10))  # one block of 5 steps x 2 copies: on-policy only
    assert agent.training_steps == 1 and agent.memory.replayed_steps == 10
    g.train_and_act(EnvironmentSteps(10))  # 20 steps in the replay: 2 replayed updates follow
    assert agent.training_steps == 1 + 3 and agent.training_rounds == 2
    g.close()


def test_refusals() -> None:
    with pytest.raises(CoachError, match="Discrete"):
        ACERAgent(_params(), OBSERVATIONS, spaces.Box(-1, 1, (2,)), 1, seed=0)
    params = _params()
    params.network_wrappers["main"].heads = [QHeadParameters()]
    with pytest.raises(InvalidParameter, match="'policy' and a 'q' head"):
        params.validate()
    params = _params()
    params.network_wrappers["main"].create_target_network = False
    with pytest.raises(InvalidParameter, match="average policy"):
        params.validate()


def test_a_resumed_run_equals_an_uninterrupted_one() -> None:
    def weights(g: BasicRLGraphManager) -> torch.Tensor:
        net = g.top_level.agent.networks["main"]
        assert net.target is not None
        return torch.cat(
            [p.detach().flatten() for m in (net.online, net.target) for p in m.parameters()]
        )

    whole = _graph(_params())
    whole.train_and_act(EnvironmentSteps(46))  # 4 blocks, and 3 steps of the next
    state = copy.deepcopy(whole.state_dict(include_memory=True))
    assert state["agents"][0]["block"]["steps"] == 3
    whole.train_and_act(EnvironmentSteps(60))
    resumed = _graph(_params(), seed=9)
    resumed.load_state_dict(state)
    resumed.train_and_act(EnvironmentSteps(60))
    assert whole.top_level.agent.training_steps > 8
    assert torch.equal(weights(whole), weights(resumed))
    np.testing.assert_array_equal(
        whole.top_level.agent.memory.segments["rewards"],
        resumed.top_level.agent.memory.segments["rewards"],
    )
    whole.close()
    resumed.close()


def test_same_seed_same_numbers(tmp_path: Path) -> None:
    def run(seed: int, name: str) -> tuple[int, torch.Tensor]:
        environment = GymEnvironmentParameters(level="CartPole-v1")
        return after_run(
            _params(), environment, short_schedule(), seed, tmp_path / name, main_weights
        )

    first, again, other = run(0, "a"), run(0, "b"), run(1, "c")
    assert first[0] == again[0] > 0
    assert torch.equal(first[1], again[1]) and not torch.equal(first[1], other[1])
