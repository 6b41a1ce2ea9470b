"""The floors of the off-policy actor-critics on their Pendulum presets' settings: batch 256,
fused Adam at 1e-3, soft targets (tau 0.005) updated by one foreach lerp over every target
tensor, sampling by index from a replay already in memory."""

from __future__ import annotations

import math

import torch
from torch import nn

from benchmarks.floors.common import Update, mlp, parameters, pendulum_replay, train


def sac_floor(observations: int = 3, actions: int = 1) -> Update:
    """A hand-written SAC update on Pendulum_SAC's settings: twin 256x256 critics on (state,
    action), a 256x256 actor with mean and state-dependent log-std heads (clamped to [-20, 2]),
    tanh-squashed into [-2, 2], batch 256, discount 0.99, fused Adam at 1e-3 for each network and
    the temperature, soft targets (tau 0.005) updated by one foreach lerp."""
    generator = torch.Generator().manual_seed(0)
    trunk = mlp(observations, 2 * actions)  # the mean and log-std heads, side by side
    critics = [mlp(observations + actions, 1) for _ in range(2)]
    targets = [mlp(observations + actions, 1) for _ in range(2)]
    for critic, target in zip(critics, targets, strict=True):
        target.load_state_dict(critic.state_dict())
    target_tensors: list[torch.Tensor] = [p for t in targets for p in t.parameters()]
    online_tensors: list[torch.Tensor] = [p for c in critics for p in c.parameters()]
    log_alpha = torch.zeros(1, requires_grad=True)
    optimizers = [torch.optim.Adam(n.parameters(), lr=1e-3, fused=True) for n in (trunk, *critics)]
    alpha_optimizer = torch.optim.Adam([log_alpha], lr=1e-3, fused=True)
    size, batch, scale, target_entropy = 10_000, 256, 2.0, -float(actions)
    states, next_states, taken, rewards, terminated = pendulum_replay(
        generator, observations, actions, size
    )

    def policy(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mean, log_std = trunk(x).chunk(2, dim=1)
        log_std = log_std.clamp(-20.0, 2.0)
        u = mean + log_std.exp() * torch.randn(mean.shape, generator=generator)
        gaussian = -0.5 * (((u - mean) / log_std.exp()) ** 2 + 2 * log_std + math.log(2 * math.pi))
        log_det = 2 * (math.log(2) - u - nn.functional.softplus(-2 * u)) + math.log(scale)
        return scale * torch.tanh(u), (gaussian - log_det).sum(-1)

    def step() -> None:
        rows = torch.randint(0, size, (batch,), generator=generator)
        s, s2 = states[rows], next_states[rows]
        alpha = log_alpha.exp().detach()
        with torch.no_grad():
            a2, log_prob2 = policy(s2)
            q2 = torch.minimum(*(t(torch.cat([s2, a2], 1)).squeeze(1) for t in targets))
            y = rewards[rows] + 0.99 * (q2 - alpha * log_prob2) * (~terminated[rows])
        pairs = torch.cat([s, taken[rows]], 1)
        for critic, optimizer in zip(critics, optimizers[1:], strict=True):
            train(optimizer, nn.functional.mse_loss(critic(pairs).squeeze(1), y))
        for critic in critics:
            critic.requires_grad_(False)
        a, log_prob = policy(s)
        q = torch.minimum(*(c(torch.cat([s, a], 1)).squeeze(1) for c in critics))
        train(optimizers[0], (alpha * log_prob - q).mean())
        for critic in critics:
            critic.requires_grad_(True)
        train(alpha_optimizer, -(log_alpha * (log_prob.detach() + target_entropy)).mean())
        with torch.no_grad():
            torch._foreach_lerp_(target_tensors, online_tensors, 0.005)

    return Update(step, 1, parameters(trunk, *critics))


def td3_floor(observations: int = 3, actions: int = 1) -> Update:
    """A hand-written TD3 update on Pendulum_TD3's settings: twin 400x300 critics, a 400x300 actor
    tanh-scaled into [-2, 2], batch 256, discount 0.98, target actions smoothed by clipped noise
    (0.2, clip 0.5), fused Adam at 1e-3, the actor and every target (tau 0.005, one foreach lerp)
    every second step."""
    generator = torch.Generator().manual_seed(0)
    hidden = (400, 300)
    actor, actor_target = mlp(observations, actions, hidden), mlp(observations, actions, hidden)
    critics = [mlp(observations + actions, 1, hidden) for _ in range(2)]
    targets = [mlp(observations + actions, 1, hidden) for _ in range(2)]
    for online, target in zip((actor, *critics), (actor_target, *targets), strict=True):
        target.load_state_dict(online.state_dict())
    target_tensors: list[torch.Tensor] = [
        p for t in (actor_target, *targets) for p in t.parameters()
    ]
    online_tensors: list[torch.Tensor] = [p for o in (actor, *critics) for p in o.parameters()]
    optimizers = [torch.optim.Adam(n.parameters(), lr=1e-3, fused=True) for n in (actor, *critics)]
    size, batch, scale = 10_000, 256, 2.0
    states, next_states, taken, rewards, terminated = pendulum_replay(
        generator, observations, actions, size
    )
    count = [0]

    def step() -> None:
        rows = torch.randint(0, size, (batch,), generator=generator)
        s, s2 = states[rows], next_states[rows]
        with torch.no_grad():
            a2 = scale * torch.tanh(actor_target(s2))
            noise = (torch.randn(a2.shape, generator=generator) * 0.2).clamp(-0.5, 0.5) * scale
            a2 = (a2 + noise).clamp(-scale, scale)
            q2 = torch.minimum(*(t(torch.cat([s2, a2], 1)).squeeze(1) for t in targets))
            y = rewards[rows] + 0.98 * q2 * (~terminated[rows])
        pairs = torch.cat([s, taken[rows]], 1)
        for critic, optimizer in zip(critics, optimizers[1:], strict=True):
            train(optimizer, nn.functional.mse_loss(critic(pairs).squeeze(1), y))
        count[0] += 1
        if count[0] % 2 == 0:
            critics[0].requires_grad_(False)
            a = scale * torch.tanh(actor(s))
            train(optimizers[0], -critics[0](torch.cat([s, a], 1)).mean())
            critics[0].requires_grad_(True)
            with torch.no_grad():
                torch._foreach_lerp_(target_tensors, online_tensors, 0.005)

    return Update(step, 1, parameters(actor, *critics))


def ddpg_floor(observations: int = 3, actions: int = 1) -> Update:
    """A hand-written DDPG update on Pendulum_DDPG's settings: a 400x300 critic on (state, action),
    a 400x300 actor tanh-squashed into [-1, 1] (the agent's box), batch 256, discount 0.98, the
    critic on the TD target through the target actor and critic, then the actor up the updated
    critic, both targets a step closer."""
    generator = torch.Generator().manual_seed(0)
    hidden = (400, 300)
    actor, actor_target = mlp(observations, actions, hidden), mlp(observations, actions, hidden)
    critic = mlp(observations + actions, 1, hidden)
    critic_target = mlp(observations + actions, 1, hidden)
    actor_target.load_state_dict(actor.state_dict())
    critic_target.load_state_dict(critic.state_dict())
    target_tensors: list[torch.Tensor] = [
        p for t in (actor_target, critic_target) for p in t.parameters()
    ]
    online_tensors: list[torch.Tensor] = [p for o in (actor, critic) for p in o.parameters()]
    actor_optimizer = torch.optim.Adam(actor.parameters(), lr=1e-3, fused=True)
    critic_optimizer = torch.optim.Adam(critic.parameters(), lr=1e-3, fused=True)
    states, next_states, taken, rewards, terminated = pendulum_replay(
        generator, observations, actions
    )
    size, batch = len(states), 256

    def step() -> None:
        rows = torch.randint(0, size, (batch,), generator=generator)
        s, s2 = states[rows], next_states[rows]
        with torch.no_grad():
            a2 = torch.tanh(actor_target(s2))
            q2 = critic_target(torch.cat([s2, a2], 1)).squeeze(1)
            y = rewards[rows] + 0.98 * q2 * (~terminated[rows])
        q = critic(torch.cat([s, taken[rows]], 1)).squeeze(1)
        train(critic_optimizer, nn.functional.mse_loss(q, y))
        critic.requires_grad_(False)
        a = torch.tanh(actor(s))
        train(actor_optimizer, -critic(torch.cat([s, a], 1)).mean())
        critic.requires_grad_(True)
        with torch.no_grad():
            torch._foreach_lerp_(target_tensors, online_tensors, 0.005)

    return Update(step, 1, parameters(actor, critic))
