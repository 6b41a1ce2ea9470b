"""Unit tests of `algorithm.learning_rate_schedule` and `algorithm.learning_rate_decay` on every
kind of agent: the rate (or the factor on each network's own rate) is set on every network the
agent trains before each training round (a replay agent's round, an on-policy block, ACER's
block and its replayed segments), and ``None`` keeps the networks' own rates."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from coach import (
    ACERAgentParameters,
    ClippedPPOAgentParameters,
    ConstantSchedule,
    DQNAgentParameters,
    LinearSchedule,
    RolloutNStepQAgentParameters,
    SACAgentParameters,
    TD3AgentParameters,
)
from coach.agents.agent import Agent
from coach.agents.parameters import AgentParameters
from coach.environments.parameters import GymEnvironmentParameters
from coach.graph_managers.basic_rl import BasicRLGraphManager
from coach.graph_managers.parameters import RunContext
from coach.validation import InvalidParameter
from tests.unit.agents.seeded import after_run, short_schedule

CARTPOLE = GymEnvironmentParameters(level="CartPole-v1")
PENDULUM = GymEnvironmentParameters(level="Pendulum-v1")


def _small(params: AgentParameters) -> AgentParameters:
    for net in params.network_wrappers.values():
        net.middleware.scheme = [16]
    return params


def _dqn() -> AgentParameters:
    return _small(DQNAgentParameters())


def _clipped_ppo() -> AgentParameters:
    params = _small(ClippedPPOAgentParameters())
    params.memory.rollout_length = 32
    params.algorithm.batch_size = 16
    return params


def _acer() -> AgentParameters:
    params = _small(ACERAgentParameters())
    params.algorithm.num_transitions_to_start_replay = 1
    return params


def _n_step_q() -> AgentParameters:
    return _small(RolloutNStepQAgentParameters())


def _td3() -> AgentParameters:
    return _small(TD3AgentParameters())


def _sac() -> AgentParameters:
    return _small(SACAgentParameters())


AGENTS: dict[str, tuple[Callable[[], AgentParameters], GymEnvironmentParameters]] = {
    "DQN": (_dqn, CARTPOLE),
    "ClippedPPO": (_clipped_ppo, CARTPOLE),
    "ACER": (_acer, CARTPOLE),
    "RolloutNStepQ": (_n_step_q, CARTPOLE),
    "TD3": (_td3, PENDULUM),
    "SAC": (_sac, PENDULUM),
}


def _rates(agent: Agent) -> dict[str, list[float]]:
    """Each trained network's learning rates, one per parameter group."""
    return {
        name: [group["lr"] for group in net.optimizer.param_groups]
        for name, net in agent.networks.items()
        if net.optimizer is not None
    }


def _weights(agent: Agent) -> dict[str, torch.Tensor]:
    return {
        name: torch.cat([p.detach().flatten() for p in net.online.parameters()]).clone()
        for name, net in agent.networks.items()
        if net.optimizer is not None
    }


@pytest.mark.parametrize("kind", AGENTS)
def test_the_schedule_sets_every_trained_networks_rate(kind: str, tmp_path: Path) -> None:
    make, environment = AGENTS[kind]
    params = make()
    for net in params.network_wrappers.values():
        net.learning_rate = 3e-4
    # From 1e-3 to 1e-5 over the first 100 training env steps, then 1e-5 to the end.
    params.algorithm.learning_rate_schedule = LinearSchedule(1e-3, 1e-5, 100)
    rates, steps = after_run(
        params,
        environment,
        short_schedule(300),
        0,
        tmp_path,
        lambda agent: (_rates(agent), agent.training_steps),
    )
    assert steps > 0, "the run took no gradient step"
    assert rates and all(rate == [pytest.approx(1e-5)] * len(rate) for rate in rates.values())


def _before_and_after(
    params: AgentParameters, environment: GymEnvironmentParameters, directory: Path
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """The trained networks' weights as the run starts and after its whole schedule."""
    run = BasicRLGraphManager(params, environment, short_schedule(300)).create_graph(
        RunContext(seed=0, experiment_dir=directory, quiet=True)
    )
    try:
        before = _weights(run.top_level.agent)
        run.improve()
        assert run.top_level.agent.training_steps > 0, "the run took no gradient step"
        return before, _weights(run.top_level.agent)
    finally:
        run.close()


@pytest.mark.parametrize("kind", AGENTS)
def test_a_zero_rate_is_set_before_the_first_gradient_step(kind: str, tmp_path: Path) -> None:
    """At a rate of 0 from the start no gradient step moves a weight (the rate is set before
    a round's first step, not after it), where the networks' own rate moves them all."""
    make, environment = AGENTS[kind]
    frozen = make()
    frozen.algorithm.learning_rate_schedule = ConstantSchedule(0.0)
    before, after = _before_and_after(frozen, environment, tmp_path / "frozen")
    assert before and before.keys() == after.keys()
    for name in before:
        assert torch.equal(before[name], after[name]), f"{name} moved at a rate of 0"
    before, after = _before_and_after(make(), environment, tmp_path / "trained")
    for name in before:
        assert not torch.equal(before[name], after[name]), f"{name} never trained"


def test_no_schedule_keeps_each_networks_own_rate(tmp_path: Path) -> None:
    params = _td3()
    params.network_wrappers["actor"].learning_rate = 1e-4
    params.network_wrappers["critic_1"].learning_rate = 1e-3
    params.network_wrappers["critic_2"].learning_rate = 2e-3
    rates = after_run(params, PENDULUM, short_schedule(300), 0, tmp_path, _rates)
    assert rates == {"actor": [1e-4], "critic_1": [1e-3], "critic_2": [2e-3]}


def test_a_decay_scales_each_networks_own_rate(tmp_path: Path) -> None:
    params = _td3()
    params.network_wrappers["actor"].learning_rate = 1e-4
    params.network_wrappers["critic_1"].learning_rate = 1e-3
    params.network_wrappers["critic_2"].learning_rate = 2e-3
    # A factor from 1 to 0.1 over the first 100 training env steps, then 0.1 to the end.
    params.algorithm.learning_rate_decay = LinearSchedule(1.0, 0.1, 100)
    rates = after_run(params, PENDULUM, short_schedule(300), 0, tmp_path, _rates)
    expected = {"actor": 1e-5, "critic_1": 1e-4, "critic_2": 2e-4}
    assert rates == {name: [pytest.approx(rate)] for name, rate in expected.items()}


@pytest.mark.parametrize("kind", ["DQN", "ClippedPPO"])
def test_a_decay_to_zero_from_the_start_moves_no_weight(kind: str, tmp_path: Path) -> None:
    make, environment = AGENTS[kind]
    params = make()
    params.algorithm.learning_rate_decay = ConstantSchedule(0.0)
    before, after = _before_and_after(params, environment, tmp_path)
    assert all(torch.equal(before[name], after[name]) for name in before)


def test_a_schedule_and_a_decay_together_are_refused() -> None:
    params = _dqn()
    params.algorithm.learning_rate_schedule = ConstantSchedule(1e-3)
    params.algorithm.learning_rate_decay = LinearSchedule(1.0, 0.0, 100)
    with pytest.raises(InvalidParameter, match="learning_rate_decay must be None where"):
        params.algorithm.validate()


def _clock_and_rates(agent: Agent) -> tuple[int, int, dict[str, list[float]]]:
    return agent.episodes, agent.training_steps, _rates(agent)


def test_a_schedule_over_episodes_follows_the_episodes_finished(tmp_path: Path) -> None:
    """Over ``"episodes"`` the rate follows the episodes finished (heatup's counted), not the
    env steps: 400 steps of CartPole finish a few dozen, far from the 1,000 the rate runs
    down over, where a schedule over the 300 training env steps would have reached its end."""
    params = _dqn()
    schedule = LinearSchedule(1e-3, 1e-5, 1000)
    params.algorithm.learning_rate_schedule = schedule
    params.algorithm.learning_rate_clock = "episodes"
    episodes, _, rates = after_run(
        params, CARTPOLE, short_schedule(300), 0, tmp_path, _clock_and_rates
    )
    assert episodes > 5
    # The last round came after the last or the one before the last episode ended.
    allowed = [pytest.approx(schedule.value(n)) for n in (episodes - 1, episodes)]
    assert rates["main"][0] in allowed, (rates, episodes)
    assert rates["main"][0] > 9e-4


def test_a_schedule_over_training_steps_follows_the_gradient_steps(tmp_path: Path) -> None:
    params = _dqn()
    schedule = LinearSchedule(1e-3, 1e-5, 1000)
    params.algorithm.learning_rate_schedule = schedule
    params.algorithm.learning_rate_clock = "training_steps"
    _, steps, rates = after_run(
        params, CARTPOLE, short_schedule(300), 0, tmp_path, _clock_and_rates
    )
    assert steps > 0
    # Set before the last round's one gradient step.
    assert rates["main"] == [pytest.approx(schedule.value(steps - 1))]


def test_an_unknown_clock_is_refused_with_the_choices() -> None:
    params = _dqn()
    params.algorithm.learning_rate_clock = "epochs"
    with pytest.raises(InvalidParameter, match="learning_rate_clock must be one of 'env_steps'"):
        params.algorithm.validate()


def _temperature_rate(agent: Agent) -> float:
    learner = agent.learner
    assert learner is not None
    (group,) = learner.alpha_optimizer.param_groups  # type: ignore[attr-defined]
    return float(group["lr"])


def test_sacs_temperature_follows_a_schedule_and_a_decay(tmp_path: Path) -> None:
    """SAC's temperature has an optimizer of its own, outside the networks: a schedule sets
    its rate as it sets theirs, and a decay scales ``temperature_learning_rate``, as
    Stable-Baselines3's schedule moves its entropy coefficient's optimizer."""
    scheduled = _sac()
    scheduled.algorithm.temperature_learning_rate = 3e-4
    scheduled.algorithm.learning_rate_schedule = LinearSchedule(1e-3, 1e-5, 100)
    rate = after_run(scheduled, PENDULUM, short_schedule(300), 0, tmp_path / "s", _temperature_rate)
    assert rate == pytest.approx(1e-5)

    decayed = _sac()
    decayed.algorithm.temperature_learning_rate = 2e-3
    decayed.algorithm.learning_rate_decay = LinearSchedule(1.0, 0.1, 100)
    rate = after_run(decayed, PENDULUM, short_schedule(300), 0, tmp_path / "d", _temperature_rate)
    assert rate == pytest.approx(2e-4)

    kept = _sac()
    kept.algorithm.temperature_learning_rate = 2e-3
    rate = after_run(kept, PENDULUM, short_schedule(300), 0, tmp_path / "k", _temperature_rate)
    assert rate == 2e-3
