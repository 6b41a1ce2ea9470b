"""Coach's gradient step against the floor of its math: the same update written directly in
PyTorch, with no framework around it.

    python -m benchmarks.floor [--steps N] [--threads N] [--short]

For each family measured so far (DQN on CartPole_DQN's settings), the floor is a minimal
hand-written update: the same network shape, batch, loss, optimizer (fused Adam), gradient
clipping (foreach) and target network, sampling its batch by index from tensors already in
memory. Coach's figure is its learner's whole gradient step on the preset's own agent,
sampling from its replay memory after a heatup. The table prints both times per step and
their ratio (the aim: 1.15 or less). ``--short`` runs 20 steps of each (for tests).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch
from torch import nn

from coach.core.step_units import EnvironmentSteps
from coach.graph_managers.parameters import RunContext
from coach.presets import load_preset


def coach_step_seconds(preset: str, steps: int, heatup: int, directory: Path) -> tuple[float, int]:
    """Seconds per gradient step of the preset's learner (sampling included), and the number
    of parameters of its online network."""
    graph = load_preset(preset).graph_manager.create_graph(
        RunContext(seed=0, experiment_dir=directory, quiet=True, progress_seconds=1e9)
    )
    graph.heatup(EnvironmentSteps(heatup))
    agent = graph.top_level.agent
    memory, learner = agent.memory, agent.learner
    assert memory is not None and learner is not None
    batch_size = agent.params.algorithm.batch_size
    network = learner.q_network.online  # type: ignore[attr-defined]
    parameters = sum(p.numel() for p in network.parameters())
    learner.learn(memory.sample(batch_size))  # warm: the first step builds what it keeps
    start = time.perf_counter()
    for _ in range(steps):
        learner.learn(memory.sample(batch_size))
    seconds = (time.perf_counter() - start) / steps
    graph.close()
    return seconds, parameters


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

    step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return (time.perf_counter() - start) / steps, sum(p.numel() for p in online.parameters())


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
        floor, floor_parameters = dqn_floor_seconds(steps)
        coach, coach_parameters = coach_step_seconds("CartPole_DQN", steps, heatup, Path(tmp))
        rows.append(("DQN", "CartPole_DQN", floor, coach, floor_parameters, coach_parameters))
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
