"""Coach's gradient step against the floor of its math: the same update written directly in
PyTorch, with no framework around it.

    python -m benchmarks.floor [--steps N] [--threads N] [--short]

For each family measured so far (DQN on CartPole_DQN's settings, SAC and TD3 on their
Pendulum presets'), the floor is a minimal
hand-written update: the same network shape, batch, loss, optimizer (fused Adam), gradient
clipping (foreach) and target network, sampling its batch by index from tensors already in
memory. Coach's figure is its learner's whole gradient step on the preset's own agent,
sampling from its replay memory after a heatup. The table prints both times per step and
their ratio (the aim: 1.15 or less). ``--short`` runs 20 steps of each (for tests).
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn

from coach.core.step_units import EnvironmentSteps
from coach.graph_managers.parameters import RunContext
from coach.presets import load_preset


def coach_step_seconds(preset: str, steps: int, heatup: int, directory: Path) -> tuple[float, int]:
    """Seconds per gradient step of the preset's learner (sampling included), and the number
    of parameters of its online networks."""
    graph = load_preset(preset).graph_manager.create_graph(
        RunContext(seed=0, experiment_dir=directory, quiet=True, progress_seconds=1e9)
    )
    graph.heatup(EnvironmentSteps(heatup))
    agent = graph.top_level.agent
    memory, learner = agent.memory, agent.learner
    assert memory is not None and learner is not None
    batch_size = agent.params.algorithm.batch_size
    networks = learner.networks.values()  # type: ignore[attr-defined]
    parameters = sum(p.numel() for n in networks for p in n.online.parameters())
    learner.learn(memory.sample(batch_size))  # warm: the first step builds what it keeps
    start = time.perf_counter()
    for _ in range(steps):
        learner.learn(memory.sample(batch_size))
    seconds = (time.perf_counter() - start) / steps
    graph.close()
    return seconds, parameters


def _timed(step: Callable[[], None], steps: int) -> float:
    """Seconds per call of ``step`` over ``steps`` calls, after one to warm up."""
    step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return (time.perf_counter() - start) / steps


def _parameters(*networks: nn.Module) -> int:
    return sum(p.numel() for n in networks for p in n.parameters())


def _train(optimizer: torch.optim.Optimizer, loss: torch.Tensor) -> None:
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()


def _pendulum_replay(
    generator: torch.Generator, observations: int, actions: int, size: int = 10_000
) -> tuple[torch.Tensor, ...]:
    """Stored Pendulum-like transitions: states, next states, actions in [-2, 2], rewards,
    terminations (none: Pendulum only truncates)."""
    return (
        torch.randn(size, observations, generator=generator),
        torch.randn(size, observations, generator=generator),
        torch.rand(size, actions, generator=generator) * 4 - 2,
        -torch.rand(size, generator=generator),
        torch.zeros(size, dtype=torch.bool),
    )


def dqn_floor_seconds(steps: int, observations: int = 4, actions: int = 2) -> tuple[float, int]:
    """Seconds per step of a hand-written DQN update on CartPole_DQN's settings: 256x256
    ReLU network, batch 64, Huber loss, discount 0.99, fused Adam at 2.3e-3, gradient norm
    clipped at 10, a target network; and its number of parameters."""

    def network() -> nn.Module:
        return nn.Sequential(
            nn.Linear(observations, 256),
            nn.ReLU(),
            nn.Linear(256, 256),
            nn.ReLU(),
            nn.Linear(256, actions),
        )

    generator = torch.Generator().manual_seed(0)
    online, target = network(), network()
    target.load_state_dict(online.state_dict())
    optimizer = torch.optim.Adam(online.parameters(), lr=2.3e-3, fused=True)
    size, batch = 10_000, 64
    states = torch.randn(size, observations, generator=generator)
    next_states = torch.randn(size, observations, generator=generator)
    taken = torch.randint(0, actions, (size,), generator=generator)
    rewards = torch.ones(size)
    terminated = torch.rand(size, generator=generator) < 0.05

    def step() -> None:
        rows = torch.randint(0, size, (batch,), generator=generator)
        q = online(states[rows]).gather(1, taken[rows, None]).squeeze(1)
        with torch.no_grad():
            best = target(next_states[rows]).max(1).values
            y = rewards[rows] + 0.99 * best * (~terminated[rows])
        loss = nn.functional.smooth_l1_loss(q, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(online.parameters(), 10.0, foreach=True)
        optimizer.step()

    return _timed(step, steps), _parameters(online)


def mlp(inputs: int, outputs: int, hidden: tuple[int, int] = (256, 256)) -> nn.Sequential:
    """Two hidden ReLU layers, as Coach's presets' middlewares (identity embedders)."""
    first, second = hidden
    return nn.Sequential(
        nn.Linear(inputs, first),
        nn.ReLU(),
        nn.Linear(first, second),
        nn.ReLU(),
        nn.Linear(second, outputs),
    )


def sac_floor_seconds(steps: int, observations: int = 3, actions: int = 1) -> tuple[float, int]:
    """Seconds per step of a hand-written SAC update on Pendulum_SAC's settings: twin
    256x256 critics on (state, action), a 256x256 actor with mean and state-dependent log-std
    heads (clamped to [-20, 2]), tanh-squashed into [-2, 2], batch 256, discount 0.99, fused
    Adam at 1e-3 for each network and the temperature, soft targets (tau 0.005) updated by
    one foreach lerp; and its number of parameters."""
    generator = torch.Generator().manual_seed(0)
    trunk = mlp(observations, 2 * actions)  # the mean and log-std heads, side by side
    critics = [mlp(observations + actions, 1) for _ in range(2)]
    targets = [mlp(observations + actions, 1) for _ in range(2)]
    for critic, target in zip(critics, targets, strict=True):
        target.load_state_dict(critic.state_dict())
    target_tensors = [p for t in targets for p in t.parameters()]
    online_tensors = [p for c in critics for p in c.parameters()]
    log_alpha = torch.zeros(1, requires_grad=True)
    optimizers = [torch.optim.Adam(n.parameters(), lr=1e-3, fused=True) for n in (trunk, *critics)]
    alpha_optimizer = torch.optim.Adam([log_alpha], lr=1e-3, fused=True)
    size, batch, scale, target_entropy = 10_000, 256, 2.0, -float(actions)
    states, next_states, taken, rewards, terminated = _pendulum_replay(
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
            _train(optimizer, nn.functional.mse_loss(critic(pairs).squeeze(1), y))
        for critic in critics:
            critic.requires_grad_(False)
        a, log_prob = policy(s)
        q = torch.minimum(*(c(torch.cat([s, a], 1)).squeeze(1) for c in critics))
        _train(optimizers[0], (alpha * log_prob - q).mean())
        for critic in critics:
            critic.requires_grad_(True)
        _train(alpha_optimizer, -(log_alpha * (log_prob.detach() + target_entropy)).mean())
        with torch.no_grad():
            torch._foreach_lerp_(target_tensors, online_tensors, 0.005)

    return _timed(step, steps), _parameters(trunk, *critics)


def td3_floor_seconds(steps: int, observations: int = 3, actions: int = 1) -> tuple[float, int]:
    """Seconds per step of a hand-written TD3 update on Pendulum_TD3's settings: twin
    400x300 critics, a 400x300 actor tanh-scaled into [-2, 2], batch 256, discount 0.98,
    target actions smoothed by clipped noise (0.2, clip 0.5), fused Adam at 1e-3, the actor
    and every target (tau 0.005, one foreach lerp) every second step; and its number of
    parameters."""
    generator = torch.Generator().manual_seed(0)
    hidden = (400, 300)
    actor, actor_target = mlp(observations, actions, hidden), mlp(observations, actions, hidden)
    critics = [mlp(observations + actions, 1, hidden) for _ in range(2)]
    targets = [mlp(observations + actions, 1, hidden) for _ in range(2)]
    for online, target in zip((actor, *critics), (actor_target, *targets), strict=True):
        target.load_state_dict(online.state_dict())
    target_tensors = [p for t in (actor_target, *targets) for p in t.parameters()]
    online_tensors = [p for o in (actor, *critics) for p in o.parameters()]
    optimizers = [torch.optim.Adam(n.parameters(), lr=1e-3, fused=True) for n in (actor, *critics)]
    size, batch, scale = 10_000, 256, 2.0
    states, next_states, taken, rewards, terminated = _pendulum_replay(
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
            _train(optimizer, nn.functional.mse_loss(critic(pairs).squeeze(1), y))
        count[0] += 1
        if count[0] % 2 == 0:
            critics[0].requires_grad_(False)
            a = scale * torch.tanh(actor(s))
            _train(optimizers[0], -critics[0](torch.cat([s, a], 1)).mean())
            critics[0].requires_grad_(True)
            with torch.no_grad():
                torch._foreach_lerp_(target_tensors, online_tensors, 0.005)

    return _timed(step, steps), _parameters(actor, *critics)


FAMILIES: list[tuple[str, str, Callable[[int], tuple[float, int]]]] = [
    ("DQN", "CartPole_DQN", dqn_floor_seconds),
    ("SAC", "Pendulum_SAC", sac_floor_seconds),
    ("TD3", "Pendulum_TD3", td3_floor_seconds),
]
"""Each family's name, the preset whose learner is timed, and its floor."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000, help="gradient steps timed")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--short", action="store_true", help="tiny budgets (for tests)")
    args = parser.parse_args()
    steps, heatup = (20, 300) if args.short else (args.steps, 1000)
    torch.set_num_threads(args.threads)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for family, preset, floor_of in FAMILIES:
            floor, floor_parameters = floor_of(steps)
            coach, coach_parameters = coach_step_seconds(preset, steps, heatup, Path(tmp))
            rows.append((family, preset, floor, coach, floor_parameters, coach_parameters))
    print(f"\ngradient step time against the floor ({steps:,} steps, {args.threads} thread(s))")
    print(
        f"{'family':<8}  {'preset':<14}  {'floor ms':>8}  {'coach ms':>8}  {'ratio':>5}  "
        f"{'parameters':>10}"
    )
    for family, preset, floor, coach, floor_parameters, coach_parameters in rows:
        same = "" if floor_parameters == coach_parameters else f" (coach {coach_parameters:,})"
        print(
            f"{family:<8}  {preset:<14}  {floor * 1e3:>8.3f}  {coach * 1e3:>8.3f}  "
            f"{coach / floor:>5.2f}  {floor_parameters:>10,}{same}"
        )
    options = "--short" if args.short else f"--steps {steps}"
    print(f"\nreproduce: python -m benchmarks.floor --threads {args.threads} {options}")


if __name__ == "__main__":
    main()
