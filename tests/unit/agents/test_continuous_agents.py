"""Unit tests for coach/agents/ddpg.py, td3.py and sac.py: the TD targets, soft updates, TD3's
target smoothing and delayed updates, SAC's squashed log-probability and temperature, the
action input of the critics, and determinism per agent."""

from __future__ import annotations

import copy
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from gymnasium import spaces

from coach.agents.critics import STACKED_CRITICS, ContinuousActorCritic, frozen, with_action
from coach.agents.ddpg import DDPGAgentParameters, actor_network, critic_network
from coach.agents.parameters import AgentParameters
from coach.agents.sac import SACAgent, SACAgentParameters
from coach.agents.td3 import TD3Agent, TD3AgentParameters
from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps
from coach.core.types import Batch
from coach.environments.parameters import GymEnvironmentParameters
from coach.errors import CoachError
from coach.filters.action import LinearBoxToBoxMap
from coach.filters.pipeline import OutputFilter
from coach.graph_managers.basic_rl import BasicRLGraphManager
from coach.graph_managers.graph_manager import GraphManager
from coach.graph_managers.parameters import RunContext, ScheduleParameters
from coach.networks.distributions import GaussianDistribution
from coach.networks.ensemble import NetworkEnsemble
from coach.networks.heads import GaussianPolicyHeadParameters

OBSERVATIONS = spaces.Dict({"observation": spaces.Box(-1.0, 1.0, (3,), np.float32)})
ACTIONS = spaces.Box(-1.0, 1.0, (2,), np.float32)


def _small(params: AgentParameters) -> AgentParameters:
    """Small networks and batches, for speed."""
    for name, network in params.network_wrappers.items():
        network.middleware.scheme = [16]
        if name == "actor" and isinstance(params, SACAgentParameters):
            network.heads = [GaussianPolicyHeadParameters(state_dependent_std=True)]
    params.algorithm.batch_size = 8
    return params


def _agent(params: AgentParameters, seed: int = 0) -> ContinuousActorCritic:
    agent = params.agent_class()(_small(params), OBSERVATIONS, ACTIONS, 1, seed=seed)
    assert isinstance(agent, ContinuousActorCritic)
    agent.phase = RunPhase.TRAIN
    return agent


def _batch(size: int = 8, seed: int = 0, terminated: bool = False) -> Batch:
    rng = np.random.default_rng(seed)
    return Batch(
        states={"observation": rng.uniform(-1, 1, (size, 3)).astype(np.float32)},
        actions=rng.uniform(-1, 1, (size, 2)).astype(np.float32),
        rewards=rng.standard_normal(size).astype(np.float32),
        next_states={"observation": rng.uniform(-1, 1, (size, 3)).astype(np.float32)},
        terminated=np.full(size, terminated),
        truncated=np.zeros(size, dtype=bool),
    )


def _weights(module: torch.nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().flatten().clone() for p in module.parameters()])


AGENTS = [DDPGAgentParameters, TD3AgentParameters, SACAgentParameters]


# -- the critics read the action ----------------------------------------------------------


@pytest.mark.parametrize("params_class", AGENTS)
def test_the_critics_read_the_state_and_the_action(params_class: type) -> None:
    agent = _agent(params_class())
    for critic in agent.learner.critics.networks:
        assert critic.online.input_keys == ["observation", "action"]
        state = {"observation": torch.zeros(4, 3)}
        a = critic({**state, "action": torch.zeros(4, 2)})["q"]
        b = critic({**state, "action": torch.ones(4, 2)})["q"]
        assert a.shape == (4,) and not torch.allclose(a, b)


@pytest.mark.parametrize("params_class", AGENTS)
def test_a_discrete_action_space_is_refused(params_class: type) -> None:
    with pytest.raises(CoachError, match=r"Box .*action space.*Discrete\(3\)"):
        params_class().agent_class()(
            _small(params_class()), OBSERVATIONS, spaces.Discrete(3), 1, seed=0
        )


# -- DDPG -----------------------------------------------------------------------------------


def test_ddpg_critic_target_is_the_one_step_td_target() -> None:
    agent = _agent(DDPGAgentParameters())
    for terminated in (False, True):
        batch = _batch(terminated=terminated)
        b = batch.map(torch.as_tensor)
        with torch.no_grad():
            next_actions = agent.actor.target_predict(b.next_states)["policy"]
            target_q = agent.learner.critics.networks[0].target_predict(
                {**b.next_states, "action": next_actions}
            )
            expected = b.rewards + 0.99 * (0.0 if terminated else 1.0) * target_q["q"]
            q = agent.learner.critics.networks[0]({**b.states, "action": b.actions})["q"]
        loss = agent.learner.learn(batch)["critic_loss"]
        assert loss == pytest.approx(float(((q - expected) ** 2).mean()), rel=1e-5)


def test_an_actor_step_through_frozen_critics_leaves_them_alone() -> None:
    agent = _agent(DDPGAgentParameters())
    critic_before = _weights(agent.learner.critics.networks[0].online)
    b = _batch().map(torch.as_tensor)
    agent.learner.critics.networks[0].online.zero_grad(set_to_none=True)
    with frozen(agent.learner.critics.networks):
        actions = agent.actor(b.states)["policy"]
        loss = -agent.learner.critics.networks[0](with_action(b.states, actions))["q"].mean()
        agent.actor.train_step(loss)
    assert all(p.grad is None for p in agent.learner.critics.networks[0].online.parameters())
    assert torch.equal(_weights(agent.learner.critics.networks[0].online), critic_before)
    assert all(p.requires_grad for p in agent.learner.critics.networks[0].online.parameters())


def test_ddpg_targets_move_by_tau_after_each_step() -> None:
    params = DDPGAgentParameters()
    params.algorithm.tau = 0.25
    agent = _agent(params)
    batch = _batch()
    target = _weights(agent.actor.target)  # type: ignore[arg-type]
    agent.learner.learn(batch)
    online = _weights(agent.actor.online)  # after the step, before nothing else moves it
    np.testing.assert_allclose(
        _weights(agent.actor.target),  # type: ignore[arg-type]
        target + 0.25 * (online - target),
        rtol=1e-5,
        atol=1e-7,
    )


def test_ddpg_explores_in_training_and_not_in_evaluation() -> None:
    agent = _agent(DDPGAgentParameters())
    state = {"observation": np.zeros((1, 3), np.float32)}
    agent.state = state
    greedy = agent.policy.actions(state)
    assert not np.allclose(agent.act().action, greedy)
    agent.phase = RunPhase.EVALUATE
    np.testing.assert_allclose(agent.act().action, greedy, rtol=1e-6)
    assert np.all(np.abs(agent.act().action) <= 1.0)


# -- TD3 ------------------------------------------------------------------------------------


def test_td3_target_actions_are_smoothed_by_clipped_noise_inside_the_bounds() -> None:
    params = TD3AgentParameters()
    params.algorithm.target_policy_noise = 1e6  # every draw hits the clip
    params.algorithm.target_noise_clip = 0.5
    agent = _agent(params)
    assert isinstance(agent, TD3Agent)
    states = {"observation": torch.zeros(1000, 3)}
    plain = agent.actor.target_predict(states)["policy"]
    smoothed = agent.learner.next_actions(states)
    offsets = smoothed - plain
    inside = (plain.abs() < 0.5).all(dim=1)
    assert torch.all((smoothed >= -1.0) & (smoothed <= 1.0))
    # Where clamping to the bounds cannot interfere, the noise is exactly +-clip.
    np.testing.assert_allclose(offsets[inside].abs().numpy(), 0.5, rtol=1e-5)
    params.algorithm.target_policy_noise = 0.2
    agent = _agent(params)
    states = {"observation": torch.zeros(20_000, 3)}
    plain = agent.actor.target_predict(states)["policy"]
    inside = (plain.abs() < 0.5).all(dim=1)
    offsets = (agent.learner.next_actions(states) - plain)[inside]
    # N(0, 0.2^2) clipped at +-0.5 (k = 2.5 sigma) has a standard deviation of 0.1977.
    k, sigma = 2.5, 0.2
    phi, cdf = math.exp(-k * k / 2) / math.sqrt(2 * math.pi), 0.5 * math.erfc(-k / math.sqrt(2))
    variance = sigma**2 * (2 * cdf - 1 - 2 * k * phi) + 2 * 0.5**2 * (1 - cdf)
    assert float(offsets.std()) == pytest.approx(math.sqrt(variance), abs=0.004)


def test_td3_updates_the_actor_and_the_targets_every_policy_delay_critic_steps() -> None:
    params = TD3AgentParameters()
    params.algorithm.policy_delay = 3
    agent = _agent(params)
    assert isinstance(agent, TD3Agent)
    watched = {
        "actor": lambda: _weights(agent.actor.online),
        "actor target": lambda: _weights(agent.actor.target),  # type: ignore[arg-type]
        "critic_1 target": lambda: _weights(agent.learner.critics.networks[0].target),  # type: ignore[arg-type]
        "critic_1": lambda: _weights(agent.learner.critics.networks[0].online),
        "critic_2": lambda: _weights(agent.learner.critics.networks[1].online),
    }
    changed: dict[str, list[int]] = {name: [] for name in watched}
    for step in range(1, 10):
        before = {name: read() for name, read in watched.items()}
        losses = agent.learner.learn(_batch(seed=step))
        for name, read in watched.items():
            if not torch.equal(read(), before[name]):
                changed[name].append(step)
        assert ("actor_loss" in losses) == (step % 3 == 0)
    assert changed["actor"] == changed["actor target"] == changed["critic_1 target"] == [3, 6, 9]
    assert changed["critic_1"] == changed["critic_2"] == list(range(1, 10))
    assert agent.learner.critic_updates == 9 and agent.learner.actor_updates == 3


def test_td3_bootstraps_from_the_smaller_target_critic() -> None:
    agent = _agent(TD3AgentParameters())
    states = {"observation": torch.zeros(5, 3)}
    with torch.no_grad():
        agent.learner.critics.networks[1].target.heads[0].linear.bias.fill_(-100.0)  # type: ignore[union-attr]
        torch.manual_seed(0)
        values = agent.learner.bootstrap_values(states)
    assert torch.all(values < -50.0)


# -- SAC ------------------------------------------------------------------------------------


def _squashed_cdf(a: float, mean: float, std: float, low: float, high: float) -> float:
    """P(A <= a) for A = centre + scale * tanh(U), U ~ N(mean, std^2)."""
    centre, scale = (high + low) / 2, (high - low) / 2
    u = math.atanh((a - centre) / scale)
    return 0.5 * math.erfc(-(u - mean) / (std * math.sqrt(2)))


@pytest.mark.parametrize(("low", "high"), [(-1.0, 1.0), (-2.0, 2.0), (0.0, 5.0)])
def test_sac_squashed_log_probability_against_a_numerical_density(low: float, high: float) -> None:
    mean = torch.tensor([[0.3, -1.2]], dtype=torch.float64)
    log_std = torch.tensor([[-0.5, 0.4]], dtype=torch.float64)
    policy = GaussianDistribution(
        mean, log_std, torch.full((2,), low, dtype=torch.float64),
        torch.full((2,), high, dtype=torch.float64), squash=True,
    )  # fmt: skip
    generator = torch.Generator().manual_seed(3)
    for _ in range(5):
        actions, u = policy.sample(generator)
        # The density of each coordinate by a central difference of its exact CDF.
        numerical = 0.0
        for d in range(2):
            a = float(actions[0, d])
            h = 1e-6 * (high - low)
            m, s = float(mean[0, d]), float(log_std[0, d].exp())
            cdf = _squashed_cdf(a + h, m, s, low, high) - _squashed_cdf(a - h, m, s, low, high)
            numerical += math.log(cdf / (2 * h))
        assert float(policy.log_prob(u)[0]) == pytest.approx(numerical, abs=1e-4)


def test_sac_temperature_rises_when_the_entropy_is_below_its_target() -> None:
    for target, rises in ((50.0, True), (-50.0, False)):
        params = SACAgentParameters()
        params.algorithm.target_entropy = target
        agent = _agent(params)
        assert isinstance(agent, SACAgent)
        before = agent.learner.alpha
        for seed in range(3):
            agent.learner.learn(_batch(seed=seed))
        assert (agent.learner.alpha > before) == rises


def test_sac_fixed_temperature_and_default_target_entropy() -> None:
    params = SACAgentParameters()
    params.algorithm.learn_temperature = False
    params.algorithm.initial_temperature = 0.2
    agent = _agent(params)
    assert isinstance(agent, SACAgent)
    agent.learner.learn(_batch())
    assert agent.learner.alpha == pytest.approx(0.2) and agent.learner.target_entropy == -2.0


def test_sac_acts_stochastically_in_training_and_with_the_mode_in_evaluation() -> None:
    agent = _agent(SACAgentParameters())
    agent.state = {"observation": np.zeros((1, 3), np.float32)}
    assert not np.array_equal(agent.act().action, agent.act().action)
    agent.phase = RunPhase.EVALUATE
    first = agent.act().action
    np.testing.assert_array_equal(first, agent.act().action)
    assert np.all(np.abs(first) <= 1.0)


def test_sac_state_round_trip_keeps_the_temperature() -> None:
    agent = _agent(SACAgentParameters())
    for seed in range(3):
        agent.learner.learn(_batch(seed=seed))
    other = _agent(SACAgentParameters(), seed=5)
    assert isinstance(agent, SACAgent) and isinstance(other, SACAgent)
    other.load_state_dict(copy.deepcopy(agent.state_dict()))
    assert other.learner.alpha == agent.learner.alpha
    a, b = agent.learner.learn(_batch(seed=9)), other.learner.learn(_batch(seed=9))
    assert a == b


# -- stacked critics ---------------------------------------------------------------------


def _stacked(params: AgentParameters) -> AgentParameters:
    params.algorithm.stack_critics = True  # type: ignore[attr-defined]
    return params


@pytest.mark.parametrize("params_class", [TD3AgentParameters, SACAgentParameters])
def test_stacked_critics_learn_as_separate_ones(params_class: type) -> None:
    """The same initial weights, the same draws: step after step, each stacked critic is
    the separate one, its loss too (to float rounding: a batched product sums in its order)."""
    separate, stacked = _agent(params_class()), _agent(_stacked(params_class()))
    assert set(stacked.networks) == {"actor", STACKED_CRITICS}
    ensemble = stacked.networks[STACKED_CRITICS]
    assert isinstance(ensemble, NetworkEnsemble)
    for seed in range(6):
        a, b = separate.learner.learn(_batch(seed=seed)), stacked.learner.learn(_batch(seed=seed))
        assert a.keys() == b.keys()
        for name in a:
            torch.testing.assert_close(torch.as_tensor(b[name]), torch.as_tensor(a[name]))
    inputs = with_action(
        {"observation": torch.rand(8, 3) * 2 - 1}, torch.rand(8, 2) * 2 - 1
    )  # fresh rows
    for i, critic in enumerate(separate.learner.critics.networks):
        torch.testing.assert_close(ensemble.member(i, inputs)["q"], critic(inputs)["q"])
        torch.testing.assert_close(
            ensemble.target_predict(inputs)["q"][i], critic.target_predict(inputs)["q"]
        )
    torch.testing.assert_close(
        _weights(stacked.networks["actor"].online), _weights(separate.networks["actor"].online)
    )


@pytest.mark.parametrize("params_class", [TD3AgentParameters, SACAgentParameters])
def test_stacked_critics_round_trip_a_checkpoint(params_class: type) -> None:
    agent = _agent(_stacked(params_class()))
    for seed in range(3):
        agent.learner.learn(_batch(seed=seed))
    other = _agent(_stacked(params_class()), seed=5)
    other.load_state_dict(copy.deepcopy(agent.state_dict()))
    a, b = agent.learner.learn(_batch(seed=9)), other.learner.learn(_batch(seed=9))
    assert a == b
    separate = _agent(params_class())
    with pytest.raises(CoachError, match="stack_critics=True"):
        separate.load_state_dict(copy.deepcopy(agent.state_dict()))
    with pytest.raises(CoachError, match="stack_critics=False"):
        other.load_state_dict(copy.deepcopy(separate.state_dict()))


def test_one_critic_is_not_stacked() -> None:
    with pytest.raises(CoachError, match="one critic"):
        _agent(_stacked(DDPGAgentParameters()))


# -- whole runs: determinism ----------------------------------------------------------------


def _pendulum(params: AgentParameters, seed: int, directory: Path) -> GraphManager:
    params = _small(params)
    params.output_filter = OutputFilter(action_filters=[LinearBoxToBoxMap(-1.0, 1.0)])
    schedule = ScheduleParameters(
        heatup_steps=EnvironmentSteps(100),
        improve_steps=EnvironmentSteps(200),
        steps_between_evaluation_periods=EnvironmentSteps(200),
        evaluation_steps=EnvironmentEpisodes(1),
    )
    graph = BasicRLGraphManager(params, GymEnvironmentParameters(level="Pendulum-v1"), schedule)
    return graph.create_graph(RunContext(seed=seed, experiment_dir=directory, quiet=True))


@pytest.mark.parametrize(
    "make_params",
    [*AGENTS, lambda: _stacked(TD3AgentParameters()), lambda: _stacked(SACAgentParameters())],
    ids=["DDPG", "TD3", "SAC", "TD3-stacked", "SAC-stacked"],
)
def test_same_seed_same_numbers(make_params: type, tmp_path: Path) -> None:
    runs = []
    for i, seed in enumerate((0, 0, 1)):
        graph = _pendulum(make_params(), seed, tmp_path / str(i))
        graph.improve()
        agent = graph.top_level.agent
        runs.append((graph.evaluations[-1].rewards, _weights(agent.networks["actor"].online)))
        graph.close()
    assert runs[0][0] == runs[1][0] and torch.equal(runs[0][1], runs[1][1])
    assert not torch.equal(runs[0][1], runs[2][1])


def test_helpers_build_the_networks_the_agents_expect() -> None:
    assert critic_network([8], 1e-3).create_target_network
    assert not actor_network([8], 1e-3, target=False).create_target_network
