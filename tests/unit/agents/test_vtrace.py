"""V-trace (`coach.agents.vtrace`): by hand, against the paper's definition as a sum, and
against the on-policy returns where the behaviour policy is the one learned."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from coach.agents.vtrace import vtrace
from coach.extension import generalized_advantages
from coach.extension import vtrace as public_vtrace
from tests.devices import DEVICES


def column(*values: float, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """A (T, 1) block column."""
    return torch.tensor(values, dtype=dtype)[:, None]


@pytest.mark.parametrize("device", DEVICES)
def test_a_block_by_hand(device: str) -> None:
    # gamma 0.9; pi/mu = 2, 0.5, 1 -> rho = c = 1, 0.5, 1 (truncated at 1).
    # deltas: 1 (1 + 0.9 * 1.0 - 0.5) = 1.4; 0.5 (0 + 0.9 * 1.5 - 1.0) = 0.175;
    #         1 (2 + 0.9 * 2.0 - 1.5) = 2.3
    # v - V backwards: 2.3; 0.175 + 0.9 * 0.5 * 2.3 = 1.21; 1.4 + 0.9 * 1 * 1.21 = 2.489
    # advantages: 1 (1 + 0.9 * 2.21 - 0.5) = 2.489; 0.5 (0.9 * 3.8 - 1) = 1.21; 2.3
    out = vtrace(
        log_rhos=column(math.log(2.0), math.log(0.5), 0.0).to(device),
        rewards=column(1.0, 0.0, 2.0).to(device),
        values=column(0.5, 1.0, 1.5).to(device),
        next_values=column(1.0, 1.5, 2.0).to(device),
        terminated=column(0, 0, 0, dtype=torch.bool).to(device),
        truncated=column(0, 0, 0, dtype=torch.bool).to(device),
        discount=0.9,
    )
    assert out.targets.squeeze(1).tolist() == pytest.approx([2.989, 2.21, 3.8])
    assert out.advantages.squeeze(1).tolist() == pytest.approx([2.489, 1.21, 2.3])
    assert out.clipped_rhos.squeeze(1).tolist() == pytest.approx([1.0, 0.5, 1.0])


def test_ends_inside_the_block_by_hand() -> None:
    # gamma 0.5, on policy. Step 0 terminates: its target is its reward alone, and nothing
    # of steps 1 and 2 flows back. Step 1 is truncated: it bootstraps from its final
    # observation's value (4.0), and step 2 (a new episode) does not flow into it.
    out = vtrace(
        log_rhos=column(0.0, 0.0, 0.0),
        rewards=column(1.0, 2.0, 3.0),
        values=column(10.0, 10.0, 10.0),
        next_values=column(99.0, 4.0, 6.0),
        terminated=column(1, 0, 0, dtype=torch.bool),
        truncated=column(0, 1, 0, dtype=torch.bool),
        discount=0.5,
    )
    assert out.targets.squeeze(1).tolist() == pytest.approx([1.0, 4.0, 6.0])
    assert out.advantages.squeeze(1).tolist() == pytest.approx([-9.0, -6.0, -4.0])


def by_definition(
    log_rhos: np.ndarray,
    rewards: np.ndarray,
    values: np.ndarray,
    next_values: np.ndarray,
    terminated: np.ndarray,
    truncated: np.ndarray,
    discount: float,
    rho_bar: float,
    c_bar: float,
    pg_rho_bar: float,
    trace_lambda: float,
) -> tuple[np.ndarray, np.ndarray]:
    """The paper's sum for each state, term by term, and the advantages from it."""
    steps, width = rewards.shape
    ratios = np.exp(log_rhos)
    rho = np.minimum(rho_bar, ratios)
    c = trace_lambda * np.minimum(c_bar, ratios)
    bootstrap = np.where(terminated, 0.0, next_values)
    delta = rho * (rewards + discount * bootstrap - values)
    ended = terminated | truncated
    targets = np.zeros_like(values)
    for b in range(width):
        for s in range(steps):
            total, weight = 0.0, 1.0
            for t in range(s, steps):
                total += discount ** (t - s) * weight * delta[t, b]
                if ended[t, b]:
                    break
                weight *= c[t, b]
            targets[s, b] = values[s, b] + total
    advantages = np.zeros_like(values)
    for b in range(width):
        for s in range(steps):
            goes_on = s + 1 < steps and not ended[s, b]
            successor = targets[s + 1, b] if goes_on else next_values[s, b]
            successor = 0.0 if terminated[s, b] else successor
            weight = min(pg_rho_bar, ratios[s, b])
            advantages[s, b] = weight * (rewards[s, b] + discount * successor - values[s, b])
    return targets, advantages


def random_block(seed: int, steps: int = 7, width: int = 4) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    ends = rng.random((steps, width))
    terminated, truncated = ends < 0.12, (ends >= 0.12) & (ends < 0.2)
    values = rng.normal(0.0, 1.0, (steps, width))
    # A successor's value is the next row's state's while the episode goes on (a truncated
    # step's final observation and the state after the block have values of their own).
    next_values = rng.normal(0.0, 1.0, (steps, width))
    goes_on = ~(terminated | truncated)[:-1]
    next_values[:-1] = np.where(goes_on, values[1:], next_values[:-1])
    return {
        "log_rhos": rng.normal(0.0, 0.7, (steps, width)),
        "rewards": rng.normal(0.0, 1.0, (steps, width)),
        "values": values,
        "next_values": next_values,
        "terminated": terminated,
        "truncated": truncated,
    }


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(
    ("rho_bar", "c_bar", "pg_rho_bar", "trace_lambda"),
    [(1.0, 1.0, 1.0, 1.0), (2.0, 0.8, 1.5, 0.9), (math.inf, math.inf, math.inf, 1.0)],
)
def test_the_recursion_is_the_papers_sum(
    seed: int, rho_bar: float, c_bar: float, pg_rho_bar: float, trace_lambda: float
) -> None:
    block = random_block(seed)
    expected_targets, expected_advantages = by_definition(
        **block,
        discount=0.95,
        rho_bar=rho_bar,
        c_bar=c_bar,
        pg_rho_bar=pg_rho_bar,
        trace_lambda=trace_lambda,
    )
    out = vtrace(
        **{k: torch.from_numpy(v) for k, v in block.items()},
        discount=0.95,
        rho_bar=rho_bar,
        c_bar=c_bar,
        pg_rho_bar=pg_rho_bar,
        trace_lambda=trace_lambda,
    )
    np.testing.assert_allclose(out.targets.numpy(), expected_targets, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(out.advantages.numpy(), expected_advantages, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("trace_lambda", [1.0, 0.95, 0.0])
def test_on_policy_the_targets_are_gaes_returns(seed: int, trace_lambda: float) -> None:
    block = random_block(seed)
    block["log_rhos"] = np.zeros_like(block["rewards"])  # mu = pi
    out = vtrace(
        **{k: torch.from_numpy(v) for k, v in block.items()},
        discount=0.99,
        trace_lambda=trace_lambda,
    )
    advantages, returns = generalized_advantages(
        rewards=block["rewards"],
        values=block["values"],
        next_values=block["next_values"],
        terminated=block["terminated"],
        truncated=block["truncated"],
        discount=0.99,
        gae_lambda=trace_lambda,
    )
    np.testing.assert_allclose(out.targets.numpy(), returns, rtol=1e-10, atol=1e-10)
    if trace_lambda == 1.0:  # r + gamma v_{s+1} - V(x_s) is then GAE(1)'s advantage
        np.testing.assert_allclose(out.advantages.numpy(), advantages, rtol=1e-10, atol=1e-10)


def test_on_policy_without_ends_the_targets_are_n_step_returns() -> None:
    # Each target: the discounted rewards to the block's end, then gamma^n V(x_T).
    rewards = np.array([[1.0], [-2.0], [0.5], [3.0]])
    last = 7.0
    out = vtrace(
        log_rhos=torch.zeros(4, 1, dtype=torch.float64),
        rewards=torch.from_numpy(rewards),
        values=torch.full((4, 1), 0.3, dtype=torch.float64),
        next_values=torch.tensor([[0.3], [0.3], [0.3], [last]], dtype=torch.float64),
        terminated=torch.zeros(4, 1, dtype=torch.bool),
        truncated=torch.zeros(4, 1, dtype=torch.bool),
        discount=0.9,
    )
    expected = [
        sum(0.9**k * rewards[s + k, 0] for k in range(4 - s)) + 0.9 ** (4 - s) * last
        for s in range(4)
    ]
    assert out.targets.squeeze(1).tolist() == pytest.approx(expected)


def test_cells_without_a_step_stop_the_trace() -> None:
    # Column 1 holds 3 of the block's 5 rows: its targets are those of its 3 steps alone.
    block = random_block(3, steps=5, width=2)
    block["terminated"][:] = block["truncated"][:] = False
    valid = np.ones((5, 2), dtype=bool)
    valid[3:, 1] = False
    tensors = {k: torch.from_numpy(v) for k, v in block.items()}
    out = vtrace(**tensors, discount=0.9, valid=torch.from_numpy(valid))
    alone = vtrace(**{k: v[:3, 1:] for k, v in tensors.items()}, discount=0.9)
    torch.testing.assert_close(out.targets[:3, 1:], alone.targets)
    torch.testing.assert_close(out.advantages[:3, 1:], alone.advantages)
    assert out.advantages[3:, 1].abs().sum() == 0


def test_no_gradient_flows_through_the_targets() -> None:
    values = torch.zeros(3, 2, requires_grad=True)
    log_rhos = torch.zeros(3, 2, requires_grad=True)
    out = vtrace(
        log_rhos=log_rhos,
        rewards=torch.ones(3, 2),
        values=values,
        next_values=torch.zeros(3, 2),
        terminated=torch.zeros(3, 2, dtype=torch.bool),
        truncated=torch.zeros(3, 2, dtype=torch.bool),
        discount=0.9,
    )
    assert not out.targets.requires_grad and not out.advantages.requires_grad


def test_it_is_a_name_of_the_extension_api() -> None:
    assert public_vtrace is vtrace
