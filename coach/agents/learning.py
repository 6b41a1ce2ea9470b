"""An agent's learning side: the `Learner`, and the pieces every learner uses as functions
(a sampled batch on the device, the one-step TD target).

A learner holds what learning needs and acting does not: the losses, the networks' optimizers
and target copies it drives, and its own counters (target syncs, delayed actor steps, an
adaptive coefficient). Its agent builds it (`Agent.make_learner`) and calls it with batches;
an agent that only acts (a rollout worker's) has none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch
from gymnasium import spaces

from coach.agents.log import AgentLog
from coach.core.run_phase import RunPhase
from coach.core.types import Batch
from coach.memories.memory import Memory
from coach.memories.rollout import Rollout
from coach.networks.network_wrapper import NetworkWrapper
from coach.schedules import Schedule


@dataclass(slots=True, frozen=True)
class Clock:
    """How far the agent's training has come, for schedules and target syncs."""

    training_steps: int
    """Gradient steps taken."""
    training_env_steps: int
    """Env steps acted in training."""
    episodes: int = 0
    """Episodes finished in heatup and training."""

    def count(self, unit: str) -> int:
        """The count a schedule over ``unit`` follows: ``"env_steps"`` (training env steps),
        ``"episodes"`` or ``"training_steps"`` (`AlgorithmParameters.learning_rate_clock`)."""
        if unit == "env_steps":
            return self.training_env_steps
        if unit == "episodes":
            return self.episodes
        if unit == "training_steps":
            return self.training_steps
        raise ValueError(f"no clock counts {unit!r}")


class Learner:
    """The learning side of an agent: one gradient step on a batch (`learn`, the algorithm's
    update top to bottom), what follows a training round (`end_round`), and the state of
    both for checkpoints.

    Args:
        networks: The agent's networks by name (with their optimizers and targets).
        memory: The agent's memory (a prioritized one takes new priorities; an on-policy
            learner reads its block from it).
        action_space: The agent's action space.
        device: The networks' device.
        torch_generator: The agent's torch generator on that device (noise, samples).
        log: Where the learner reports scalars beyond its losses.
    """

    def __init__(
        self,
        networks: dict[str, NetworkWrapper],
        memory: Memory | None,
        action_space: spaces.Space,
        device: torch.device,
        torch_generator: torch.Generator,
        log: AgentLog,
    ) -> None:
        self.networks = networks
        self.memory = memory
        self.action_space = action_space
        self.device = device
        self.torch_generator = torch_generator
        self.log = log

    def learn(self, batch: Batch) -> Mapping[str, float | torch.Tensor]:
        """One gradient step on a sampled batch; returns named losses for logging, as floats
        or as one-element tensors (detached): those are read back to the host once per
        training round, not once per step (`Agent.training_round`)."""
        raise NotImplementedError(f"{type(self).__name__} does not learn from batches")

    def end_round(self, clock: Clock) -> None:
        """After each training round (target syncs and the like)."""

    def tensors(self, observation: dict[str, Any]) -> dict[str, torch.Tensor]:
        """A batch of observations as tensors on the learner's device."""
        return {k: torch.as_tensor(v, device=self.device) for k, v in observation.items()}

    def state_dict(self) -> dict[str, Any]:
        """The learner's own state (counters, coefficients, their optimizers) for checkpoints;
        the networks are saved by the agent."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what `state_dict` returned."""


def cpu_tensor(array: Any) -> torch.Tensor:
    """A CPU tensor of ``array``: a NumPy array's shares its memory (``torch.from_numpy``,
    what ``torch.as_tensor`` makes of it, at a third of the cost), anything else goes
    through ``torch.as_tensor``."""
    return torch.from_numpy(array) if type(array) is np.ndarray else torch.as_tensor(array)


def on_device(batch: Batch, device: torch.device) -> Batch:
    """A sampled batch as tensors on ``device``: on the CPU the arrays themselves (no copy);
    on CUDA each one staged in pinned host memory and copied without blocking, so that the
    copies overlap the work already queued on the device."""
    if device.type == "cpu":
        return batch.map(cpu_tensor)
    if device.type != "cuda":
        return batch.map(lambda a: torch.as_tensor(a, device=device))
    return batch.map(lambda a: torch.as_tensor(a).pin_memory().to(device, non_blocking=True))


def round_mean(values: list[float | torch.Tensor]) -> float:
    """The mean of a loss over a training round's steps, in step order: the values that are
    tensors are read back to the host together, once (one wait for the device, not one per
    step), and summed as floats in order, as if each had been read in its step."""
    tensors = [v for v in values if isinstance(v, torch.Tensor)]
    host = iter(torch.stack(tensors).tolist() if tensors else [])
    return sum(next(host) if isinstance(v, torch.Tensor) else v for v in values) / len(values)


def td_targets(
    rewards: torch.Tensor,
    discount: torch.Tensor | float,
    terminated: torch.Tensor,
    next_values: torch.Tensor,
) -> torch.Tensor:
    """``r + discount * V(s')``, the bootstrap dropped only where the episode terminated (a
    truncation still bootstraps), (B,)."""
    ended = terminated if terminated.dtype == torch.bool else terminated != 0
    return rewards + torch.where(ended, 0.0, discount * next_values)


def follow_learning_rate(
    networks: Mapping[str, NetworkWrapper],
    schedule: Schedule | None,
    decay: Schedule | None,
    clock: Clock,
    unit: str = "env_steps",
) -> None:
    """Set the learning rate of every network with an optimizer at the clock's count of
    ``unit`` (an algorithm's ``learning_rate_clock``): ``schedule``'s value (its
    ``learning_rate_schedule``), or ``decay``'s factor times the network's own
    ``learning_rate`` (its ``learning_rate_decay``); nothing without either. Rounds call it
    before their first gradient step, so a resumed run takes the rate the uninterrupted one
    would."""
    if schedule is None and decay is None:
        return
    step = clock.count(unit)
    for net in networks.values():
        if net.optimizer is not None:
            rate = learning_rate_at(net.params.learning_rate, schedule, decay, step)
            for group in net.optimizer.param_groups:
                group["lr"] = rate


def learning_rate_at(
    own: float, schedule: Schedule | None, decay: Schedule | None, step: int
) -> float:
    """The rate of an optimizer whose own rate is ``own`` at ``step`` of the clock:
    ``schedule``'s value, else ``decay``'s factor times ``own``, else ``own``."""
    if schedule is not None:
        return schedule.value(step)
    if decay is not None:
        return own * decay.value(step)
    return own


class LearnsBlocks(Protocol):
    """A learner that learns from a whole rollout block at once (the on-policy agents', the
    asynchronous n-step Q agent's)."""

    def learn_block(self, clock: Clock) -> tuple[int, dict[str, float]]:
        """The block's gradient steps; how many, and the mean of each named loss."""
        ...


class TrainsOnBlocks(Protocol):
    """What `train_on_full_block` reads and moves on of an agent (an `Agent`'s)."""

    phase: RunPhase
    memory: Memory | None
    training_rounds: int
    training_steps: int
    log: AgentLog

    def clock(self) -> Clock: ...

    def follow_learning_rate(self) -> None: ...


def train_on_full_block(agent: TrainsOnBlocks, learner: LearnsBlocks | None) -> int:
    """`Agent.train` of an agent that learns from its rollout block: once the block is full
    (in training), ``learner.learn_block`` on it, the block cleared, the counters moved on and
    the losses logged; the gradient steps taken (none without a learner)."""
    rollout = agent.memory
    if learner is None or agent.phase is not RunPhase.TRAIN:
        return 0
    if not isinstance(rollout, Rollout) or not rollout.full:
        return 0
    agent.follow_learning_rate()
    steps, losses = learner.learn_block(agent.clock())
    rollout.clear()
    agent.training_rounds += 1
    agent.training_steps += steps
    for name, value in losses.items():
        agent.log.scalar(f"Loss/{name}", value)
    return steps
