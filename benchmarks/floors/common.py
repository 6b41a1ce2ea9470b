"""What the floors share: the timing loop, parameter counts, an optimizer step, the MLPs of
Coach's presets and a replay of Pendulum-like transitions."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn


@dataclass(frozen=True)
class Update:
    """Something to time: a call that makes ``updates`` gradient steps, and the number of
    parameters the steps train."""

    call: Callable[[], object]
    """One call: ``updates`` gradient steps (sampling included)."""
    updates: int
    """Gradient steps per call."""
    parameters: int
    """Parameters of the networks trained (the online ones)."""

    def seconds(self, steps: int, clock: Callable[[], float] = time.perf_counter) -> float:
        """Seconds per gradient step over at least ``steps`` steps (whole calls), by
        ``clock`` (wall time by default; `time.process_time` counts this process's CPU
        time only, which other processes on the machine barely change)."""
        calls = max(1, -(-steps // self.updates))
        start = clock()
        for _ in range(calls):
            self.call()
        return (clock() - start) / (calls * self.updates)


def parameters(*networks: nn.Module) -> int:
    """The number of parameters of ``networks``."""
    return sum(p.numel() for n in networks for p in n.parameters())


def train(optimizer: torch.optim.Optimizer, loss: torch.Tensor) -> None:
    """One optimizer step on ``loss``, without clipping."""
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()


def clipped_train(
    optimizer: torch.optim.Optimizer, network: nn.Module, loss: torch.Tensor, max_norm: float
) -> None:
    """One optimizer step on ``loss``, the gradient norm clipped at ``max_norm`` (foreach)."""
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    nn.utils.clip_grad_norm_(network.parameters(), max_norm, foreach=True)
    optimizer.step()


def mlp(
    inputs: int,
    outputs: int,
    hidden: tuple[int, int] = (256, 256),
    activation: type[nn.Module] = nn.ReLU,
) -> nn.Sequential:
    """Two hidden layers, as Coach's presets' middlewares (identity embedders)."""
    first, second = hidden
    return nn.Sequential(
        nn.Linear(inputs, first),
        activation(),
        nn.Linear(first, second),
        activation(),
        nn.Linear(second, outputs),
    )


def pendulum_replay(
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


def cartpole_replay(
    generator: torch.Generator, observations: int, actions: int, size: int = 10_000
) -> tuple[torch.Tensor, ...]:
    """Stored CartPole-like transitions: states, next states, actions taken, rewards (1),
    terminations (one in twenty)."""
    return (
        torch.randn(size, observations, generator=generator),
        torch.randn(size, observations, generator=generator),
        torch.randint(0, actions, (size,), generator=generator),
        torch.ones(size),
        torch.rand(size, generator=generator) < 0.05,
    )
