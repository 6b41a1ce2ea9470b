"""The floors of the value-based family on the CartPole presets' settings (`_cartpole`):
a 256x256 ReLU network, batch 64, discount 0.99, fused Adam, the gradient norm clipped at 10
(foreach), a target network (copied once per round: nothing to time per step)."""

from __future__ import annotations

import torch
from torch import nn

from benchmarks.floors.common import Update, cartpole_replay, clipped_train, mlp, parameters

BATCH = 64
DISCOUNT = 0.99
CLIP = 10.0


def dqn_floor(observations: int = 4, actions: int = 2) -> Update:
    """A hand-written DQN update on CartPole_DQN's settings: the Huber loss to the target
    network's greedy TD target, Adam at 2.3e-3."""
    generator = torch.Generator().manual_seed(0)
    online, target = mlp(observations, actions), mlp(observations, actions)
    target.load_state_dict(online.state_dict())
    optimizer = torch.optim.Adam(online.parameters(), lr=2.3e-3, fused=True)
    states, next_states, taken, rewards, terminated = cartpole_replay(
        generator, observations, actions
    )
    size = len(states)

    def step() -> None:
        rows = torch.randint(0, size, (BATCH,), generator=generator)
        q = online(states[rows]).gather(1, taken[rows, None]).squeeze(1)
        with torch.no_grad():
            best = target(next_states[rows]).max(1).values
            y = rewards[rows] + DISCOUNT * best * (~terminated[rows])
        clipped_train(optimizer, online, nn.functional.smooth_l1_loss(q, y), CLIP)

    return Update(step, 1, parameters(online))


def c51_floor(observations: int = 4, actions: int = 2, atoms: int = 51) -> Update:
    """A hand-written C51 update on CartPole_C51's settings: 51 atoms from 0 to 100, the
    greedy next action by the target network's expected returns, its distribution shifted
    by the TD target's reward and discount and projected back onto the atoms, the cross
    entropy of the predicted distribution to it, Adam at 1e-3."""
    generator = torch.Generator().manual_seed(0)
    online, target = mlp(observations, actions * atoms), mlp(observations, actions * atoms)
    target.load_state_dict(online.state_dict())
    optimizer = torch.optim.Adam(online.parameters(), lr=1e-3, fused=True)
    states, next_states, taken, rewards, terminated = cartpole_replay(
        generator, observations, actions
    )
    size = len(states)
    v_min, v_max = 0.0, 100.0
    support = torch.linspace(v_min, v_max, atoms)
    delta = (v_max - v_min) / (atoms - 1)
    rows_of = torch.arange(BATCH)

    def step() -> None:
        rows = torch.randint(0, size, (BATCH,), generator=generator)
        logits = online(states[rows]).view(BATCH, actions, atoms)
        log_p = logits[rows_of, taken[rows]].log_softmax(-1)
        with torch.no_grad():
            next_p = target(next_states[rows]).view(BATCH, actions, atoms).softmax(-1)
            best = (next_p * support).sum(-1).argmax(1)
            p = next_p[rows_of, best]
            discounts = DISCOUNT * (~terminated[rows])
            tz = (rewards[rows, None] + discounts[:, None] * support).clamp(v_min, v_max)
            b = (tz - v_min) / delta
            lower, upper = b.floor().long(), b.ceil().long()
            lower[(upper > 0) & (lower == upper)] -= 1
            upper[(lower < atoms - 1) & (lower == upper)] += 1
            projected = torch.zeros_like(p)
            projected.scatter_add_(1, lower, p * (upper - b))
            projected.scatter_add_(1, upper, p * (b - lower))
        loss = -(projected * log_p).sum(-1).mean()
        clipped_train(optimizer, online, loss, CLIP)

    return Update(step, 1, parameters(online))


def qr_dqn_floor(observations: int = 4, actions: int = 2, quantiles: int = 50) -> Update:
    """A hand-written QR-DQN update on CartPole_QR_DQN's settings: 50 quantiles at the
    midpoints, the greedy next action by the target network's mean quantile, the quantile
    Huber loss (kappa 1) to its quantiles shifted by the TD target's reward and discount,
    summed over the predicted quantiles and averaged over the target ones, Adam at 1e-3."""
    generator = torch.Generator().manual_seed(0)
    online = mlp(observations, actions * quantiles)
    target = mlp(observations, actions * quantiles)
    target.load_state_dict(online.state_dict())
    optimizer = torch.optim.Adam(online.parameters(), lr=1e-3, fused=True)
    states, next_states, taken, rewards, terminated = cartpole_replay(
        generator, observations, actions
    )
    size = len(states)
    taus = ((2 * torch.arange(quantiles) + 1) / (2 * quantiles))[:, None]  # (N, 1)
    rows_of = torch.arange(BATCH)
    shape = (BATCH, quantiles, quantiles)

    def step() -> None:
        rows = torch.randint(0, size, (BATCH,), generator=generator)
        theta = online(states[rows]).view(BATCH, actions, quantiles)[rows_of, taken[rows]]
        with torch.no_grad():
            next_q = target(next_states[rows]).view(BATCH, actions, quantiles)
            best = next_q.mean(-1).argmax(1)
            discounts = DISCOUNT * (~terminated[rows])
            y = rewards[rows, None] + discounts[:, None] * next_q[rows_of, best]  # (B, M)
            below = y[:, None, :] < theta.detach()[:, :, None]  # u = y_j - theta_i < 0
            weight = (taus - below.float()).abs()
        huber = nn.functional.huber_loss(
            theta[:, :, None].expand(shape), y[:, None, :].expand(shape), reduction="none"
        )
        loss = (weight * huber).mean(2).sum(1).mean()
        clipped_train(optimizer, online, loss, CLIP)

    return Update(step, 1, parameters(online))
