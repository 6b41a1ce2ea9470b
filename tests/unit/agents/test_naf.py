"""NAF (coach/agents/naf.py, coach/networks/naf_head.py): the precision factor's layout, the
advantage as the quadratic form of P = L L^T by hand, the greedy action is the mean, the TD
target through the target network's V, acting, refusals, the target's Polyak moves, and
determinism."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from gymnasium import spaces

from coach.agents.learning import Clock
from coach.agents.naf import NAFAgent, NAFAgentParameters, naf_network
from coach.core.run_phase import RunPhase
from coach.core.step_units import TrainingSteps
from coach.core.types import Batch
from coach.environments.parameters import GymEnvironmentParameters
from coach.errors import CoachError
from coach.networks.heads import QHeadParameters
from coach.networks.naf_head import PrecisionHead, naf_advantage, naf_q
from coach.parameters import set_parameter
from tests.unit.agents.seeded import after_run, main_weights, short_schedule

OBSERVATIONS = spaces.Dict({"observation": spaces.Box(-1.0, 1.0, (3,), np.float32)})
ACTIONS = spaces.Box(-1.0, 1.0, (2,), np.float32)


def _params() -> NAFAgentParameters:
    params = NAFAgentParameters()
    params.network_wrappers["main"] = naf_network([16], 1e-3)
    params.algorithm.batch_size = 8
    return params


def _agent(params: NAFAgentParameters | None = None, seed: int = 0) -> NAFAgent:
    agent = NAFAgent(params or _params(), OBSERVATIONS, ACTIONS, 1, seed=seed)
    agent.phase = RunPhase.TRAIN
    return agent


def _batch(size: int = 8, terminated: bool = False) -> Batch:
    rng = np.random.default_rng(0)
    return Batch(
        states={"observation": rng.uniform(-1, 1, (size, 3)).astype(np.float32)},
        actions=rng.uniform(-1, 1, (size, 2)).astype(np.float32),
        rewards=rng.standard_normal(size).astype(np.float32),
        next_states={"observation": rng.uniform(-1, 1, (size, 3)).astype(np.float32)},
        terminated=np.full(size, terminated),
        truncated=np.zeros(size, dtype=bool),
    )


def test_the_precision_factor_is_lower_triangular_with_an_exponentiated_diagonal() -> None:
    head = PrecisionHead(4, 3)
    with torch.no_grad():
        head.linear.weight.zero_()
        head.linear.bias.copy_(torch.tensor([0.0, 1.0, 2.0, 3.0, 4.0, 5.0]))
    factor = head(torch.zeros(2, 4))
    # Row by row: L00 = e^0; L10 = 1, L11 = e^2; L20 = 3, L21 = 4, L22 = e^5.
    e = np.e
    expected = torch.tensor([[1.0, 0.0, 0.0], [1.0, e**2, 0.0], [3.0, 4.0, e**5]])
    torch.testing.assert_close(factor, expected.expand(2, 3, 3))


def test_a_huge_off_diagonal_number_gives_finite_gradients() -> None:
    head = PrecisionHead(1, 2)
    with torch.no_grad():
        head.linear.weight.zero_()
        head.linear.bias.copy_(torch.tensor([0.0, 1000.0, 0.0]))  # L10 = 1000: e^1000 = inf
    head(torch.ones(1, 1)).sum().backward()
    assert head.linear.bias.grad is not None and torch.isfinite(head.linear.bias.grad).all()


def test_the_advantage_is_the_quadratic_form_of_the_precision_matrix() -> None:
    factor = torch.tensor([[[2.0, 0.0], [0.5, 1.5]]])
    mu = torch.tensor([[0.2, -0.4]])
    action = torch.tensor([[1.0, 0.6]])
    # P = L L^T = [[4, 1], [1, 2.5]]; d = a - mu = (0.8, 1.0)
    # d^T P d = 4 * 0.64 + 2 * 1 * 0.8 * 1.0 + 2.5 * 1.0 = 2.56 + 1.6 + 2.5 = 6.66
    assert naf_advantage(mu, factor, action).item() == pytest.approx(-0.5 * 6.66)
    outputs = {"policy": mu, "precision": factor, "v": torch.tensor([3.0])}
    assert naf_q(outputs, action).item() == pytest.approx(3.0 - 3.33)


def test_the_greedy_action_is_the_mean_and_its_value_is_v() -> None:
    agent = _agent()
    states = {"observation": torch.tensor([[0.1, -0.2, 0.3]])}
    outputs = agent.networks["main"](states)
    mu = outputs["policy"].detach()
    assert naf_q(outputs, mu).item() == pytest.approx(outputs["v"].item())
    rng = np.random.default_rng(1)
    for _ in range(20):  # any other action is worth less
        other = mu + torch.as_tensor(rng.normal(0, 0.3, (1, 2)), dtype=torch.float32)
        assert naf_q(outputs, other).item() < outputs["v"].item()


def test_the_target_is_r_plus_discounted_target_v() -> None:
    agent = _agent()
    main = agent.networks["main"]
    for terminated in (False, True):
        batch = _batch(terminated=terminated)
        b = batch.map(torch.as_tensor)
        with torch.no_grad():
            next_v = main.target_predict(b.next_states)["v"]
            target = b.rewards + 0.99 * (0.0 if terminated else 1.0) * next_v
            q = naf_q(main(b.states), b.actions)
        losses = agent.learner.learn(batch)
        assert float(losses["q_loss"]) == pytest.approx(float((q - target).square().mean()))


def test_acting_adds_noise_in_training_and_none_in_evaluation() -> None:
    agent = _agent()
    state = {"observation": np.zeros((1, 3), np.float32)}
    with torch.no_grad():
        mu = agent.networks["main"]({"observation": torch.zeros(1, 3)})["policy"].numpy()
    greedy = agent.policy.decide(state, RunPhase.EVALUATE).action
    np.testing.assert_allclose(greedy, np.clip(mu, -1, 1), rtol=1e-6)
    noisy = agent.policy.decide(state, RunPhase.TRAIN).action
    assert not np.allclose(noisy, greedy)


def test_several_target_syncs_due_in_a_round_compound() -> None:
    params = _params()
    params.algorithm.num_steps_between_copying_online_weights_to_target = TrainingSteps(1)
    params.algorithm.target_update_rate = 0.1
    agent = _agent(params)
    main = agent.networks["main"]
    before = [p.detach().clone() for p in main.target.parameters()]
    online = [p.detach().clone() for p in main.online.parameters()]
    agent.learner.end_round(Clock(training_steps=3, training_env_steps=0))
    rate = 1 - 0.9**3
    for old, new, towards in zip(before, main.target.parameters(), online, strict=True):
        torch.testing.assert_close(new.detach(), old + rate * (towards - old))


def test_refusals() -> None:
    with pytest.raises(CoachError, match="Box"):
        NAFAgent(_params(), OBSERVATIONS, spaces.Discrete(3), 1, seed=0)
    params = _params()
    params.network_wrappers["main"].heads = [QHeadParameters()]
    with pytest.raises(CoachError, match="'policy', 'v' and 'precision'"):
        NAFAgent(params, OBSERVATIONS, ACTIONS, 1, seed=0)
    # NAF's greedy value is V(s): there is no next action to pick, so no double_q to set.
    with pytest.raises(CoachError, match=r"agent\.algorithm has no field 'double_q'"):
        set_parameter({"agent": _params()}, "agent.algorithm.double_q", "True")


def test_same_seed_same_numbers(tmp_path: Path) -> None:
    def run(seed: int, name: str) -> tuple[int, torch.Tensor]:
        params = _params()
        params.algorithm.num_consecutive_training_steps = 1
        environment = GymEnvironmentParameters(level="Pendulum-v1")
        return after_run(params, environment, short_schedule(), seed, tmp_path / name, main_weights)

    first, again, other = run(0, "a"), run(0, "b"), run(1, "c")
    assert first[0] == again[0] > 0
    assert torch.equal(first[1], again[1]) and not torch.equal(first[1], other[1])
