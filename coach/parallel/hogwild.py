"""Weights shared by asynchronous workers on this machine, updated without locks (Hogwild!,
Recht et al., 2011, as A3C updates them: Mnih et al., 2016).

This process's agent moves its networks into shared memory (``share_memory_``): the online
weights, the optimizer's statistics (Adam's moments and step count: the paper's shared
RMSProp, in Adam's form) and the target copy. Each worker receives them with its process and
acts with local copies of the weights. Its networks' optimizers are `SharedStep`s: a
gradient step puts the local gradients on the shared parameters' ``.grad``, steps an
optimizer over the shared parameters whose state is the shared statistics, and copies the
shared weights back into the local ones before the next rollout. No lock is taken: the
workers write the same memory at once, as Hogwild! does.

The counters are shared too, a row per worker and each row written by its worker alone
(no lock either): training env steps, episodes, and the gradient steps each network took.
Their sums are the global clock: a target network is refreshed on it (`TargetSchedule`), by
whichever worker's update makes a refresh due, and every worker's learning rate schedule
follows it (`clock`), as the paper anneals one rate over the whole run's steps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from coach.agents.agent import Agent
from coach.agents.learning import Clock
from coach.agents.parameters import AgentParameters
from coach.agents.q_learning import DQNAlgorithmParameters
from coach.core.step_units import EnvironmentSteps
from coach.networks.network_wrapper import NetworkWrapper
from coach.networks.optimizer import AdamW

ENV_STEPS = 0
"""The counters' column of training env steps."""
EPISODES = 1
"""The counters' column of episodes (heatup's and training's)."""
NETWORKS = 2
"""The counters' first column of gradient steps, one column per network."""


class SharedStep(torch.optim.Optimizer):
    """A worker network's optimizer in asynchronous training. `step` hands the gradients of
    the local weights to ``apply``, which updates the shared weights with them and copies
    them back into the local ones; ``param_groups`` are the shared optimizer's, so that a
    learning-rate schedule reaches it.

    Args:
        local: The worker network's own parameters.
        apply: Takes their gradients (in the same order) to the shared weights.
        param_groups: The shared optimizer's parameter groups.
    """

    def __init__(
        self,
        local: list[torch.nn.Parameter],
        apply: Callable[[list[torch.Tensor]], None],
        param_groups: list[dict[str, Any]],
    ) -> None:
        super().__init__(local, {})
        self.local = local
        self.apply = apply
        self.param_groups = param_groups

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.local:
            p.grad = None

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        self.apply([p.grad if p.grad is not None else torch.zeros_like(p) for p in self.local])
        return None


@dataclass(slots=True, frozen=True)
class TargetSchedule:
    """When a shared target network is refreshed: every ``period`` steps of the global
    clock, each refresh moving it ``rate`` of the way to the online weights."""

    period: int
    """Global steps between two refreshes."""
    counts_env_steps: bool
    """The clock counts env steps (else the network's gradient steps)."""
    rate: float
    """1 copies the online weights; less averages them in."""

    def due(self, env_steps: int, updates: int) -> int:
        """How many refreshes are due at that clock."""
        return (env_steps if self.counts_env_steps else updates) // max(self.period, 1)

    def moved(self, refreshes: int) -> float:
        """How far ``refreshes`` refreshes in a row move the target (a copy stays a copy)."""
        return 1.0 - (1.0 - self.rate) ** refreshes


def target_schedule(params: AgentParameters) -> TargetSchedule | None:
    """The target refreshes of an agent's algorithm on the global clock (the value-based
    family's), or ``None`` for an algorithm without a target network."""
    algorithm = params.algorithm
    if not isinstance(algorithm, DQNAlgorithmParameters):
        return None
    period = algorithm.num_steps_between_copying_online_weights_to_target
    return TargetSchedule(
        period.num_steps, isinstance(period, EnvironmentSteps), algorithm.target_update_rate
    )


def leave_targets_to_the_server(params: AgentParameters) -> None:
    """A worker's agent refreshes no target itself: the shared one is refreshed on the global
    clock (`TargetSchedule`), and each worker reads it."""
    if isinstance(params.algorithm, DQNAlgorithmParameters):
        params.algorithm.num_steps_between_copying_online_weights_to_target = EnvironmentSteps(
            2**62
        )


@dataclass(slots=True)
class SharedNetwork:
    """One network of the agent in shared memory."""

    online: list[torch.Tensor]
    """The online weights and buffers (`state_dict`'s tensors, in its order)."""
    parameters: list[int]
    """Which of them are parameters (the optimizer's, in its order)."""
    statistics: list[dict[str, torch.Tensor]]
    """The optimizer's state of each parameter."""
    target: list[torch.Tensor] | None
    """The target copy's weights and buffers, if the network has one."""


def _share(network: NetworkWrapper) -> SharedNetwork:
    """Move ``network``'s weights, target and optimizer state into shared memory in place
    (the network keeps them: checkpoints and evaluation read them as they are)."""
    network.online.share_memory()
    names = list(network.online.state_dict())
    parameters = [names.index(name) for name, _ in network.online.named_parameters()]
    optimizer = network.optimizer
    assert optimizer is not None
    statistics = []
    for p in network.online.parameters():
        state = optimizer.state[p]
        if not state:  # Adam's state as its first step would make it, made now to be shared
            state["step"] = torch.zeros((), dtype=torch.float32)
            state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
        for value in state.values():
            if isinstance(value, torch.Tensor):
                value.share_memory_()
        statistics.append(state)
    target = None
    if network.target is not None:
        network.target.share_memory()
        target = list(network.target.state_dict().values())
    return SharedNetwork(list(network.online.state_dict().values()), parameters, statistics, target)


class SharedWeights:
    """What asynchronous workers on this machine share: ``agent``'s networks in shared
    memory (the agent keeps using them) and the counters. It travels to each worker's
    process, which `connect`s its own agent's networks to it.

    Args:
        agent: This process's agent: its networks become the shared ones.
        num_workers: The workers, ranked 1 to ``num_workers``.
        targets: When target networks are refreshed (``None``: never).
        env_steps: Training env steps taken before (a resumed run's).
        updates: Each network's gradient steps taken before.
        episodes: Episodes finished before.
    """

    def __init__(
        self,
        agent: Agent,
        num_workers: int,
        targets: TargetSchedule | None,
        env_steps: int = 0,
        updates: int = 0,
        episodes: int = 0,
    ) -> None:
        networks = {n: net for n, net in agent.networks.items() if net.optimizer is not None}
        self.names = list(networks)
        self.networks = {name: _share(net) for name, net in networks.items()}
        self.counters = torch.zeros(
            (num_workers + 1, NETWORKS + len(self.names)), dtype=torch.int64
        )
        """Per rank: training env steps, episodes, then each network's gradient steps (rank
        0: before this run)."""
        self.counters[0, ENV_STEPS] = env_steps
        self.counters[0, EPISODES] = episodes
        self.counters[0, NETWORKS:] = updates
        self.counters.share_memory_()
        self.targets = targets
        due = targets.due(env_steps, updates) if targets is not None else 0
        self.refreshes = torch.full((len(self.names),), due, dtype=torch.int64).share_memory_()
        """Target refreshes made so far, per network."""
        self.rank = 0
        """The worker this copy is in (0 in the process that made it)."""
        self._local: dict[str, tuple[list[torch.Tensor], list[torch.Tensor] | None]] = {}
        self._seen: dict[str, int] = {}
        """The refreshes of each target the worker's copy holds."""

    def __getstate__(self) -> dict[str, Any]:
        return {
            "names": self.names,
            "networks": self.networks,
            "counters": self.counters,
            "targets": self.targets,
            "refreshes": self.refreshes,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.rank, self._local, self._seen = 0, {}, {}

    # -- in a worker ------------------------------------------------------------------------

    def connect(self, rank: int, networks: dict[str, NetworkWrapper]) -> None:
        """Worker ``rank``'s networks act with the shared weights and take their gradient
        steps on them (`SharedStep`)."""
        self.rank = rank
        for name in self.names:
            network = networks[name]
            shared = self.networks[name]
            assert network.optimizer is not None, "a worker's agent learns"
            group = network.optimizer.param_groups[0]
            params = [shared.online[i] for i in shared.parameters]
            optimizer = AdamW(  # Coach's networks learn with AdamW (`NetworkWrapper`)
                params,
                lr=group["lr"],
                betas=group["betas"],
                eps=group["eps"],
                weight_decay=group["weight_decay"],
                fused=group["fused"],
            )
            for p, state in zip(params, shared.statistics, strict=True):
                optimizer.state[p] = state

            def apply(grads: list[torch.Tensor], name: str = name, opt: Any = optimizer) -> None:
                self._apply(name, opt, grads)

            local = list(network.online.parameters())
            network.optimizer = SharedStep(local, apply, optimizer.param_groups)
            target = list(network.target.state_dict().values()) if network.target else None
            self._local[name] = (list(network.online.state_dict().values()), target)
            self._seen[name] = -1
            self.pull(name)

    def count(self, env_steps: int, episodes: int) -> None:
        """The worker took ``env_steps`` more training env steps and finished ``episodes``
        more episodes (the global clock)."""
        if env_steps:
            self.counters[self.rank, ENV_STEPS] += env_steps
        if episodes:
            self.counters[self.rank, EPISODES] += episodes

    def clock(self) -> Clock:
        """The global clock: every worker's counts summed (the gradient steps of the network
        that took the most)."""
        totals = self.counters.sum(dim=0).tolist()
        return Clock(max(totals[NETWORKS:], default=0), totals[ENV_STEPS], totals[EPISODES])

    def _apply(
        self, name: str, optimizer: torch.optim.Optimizer, grads: list[torch.Tensor]
    ) -> None:
        params = optimizer.param_groups[0]["params"]
        for p, grad in zip(params, grads, strict=True):
            p.grad = grad
        optimizer.step()
        for p in params:
            p.grad = None
        column = NETWORKS + self.names.index(name)
        self.counters[self.rank, column] += 1
        self._refresh_target(name, column)
        self.pull(name)

    def _refresh_target(self, name: str, column: int) -> None:
        """Refresh the shared target of ``name`` if the global clock says it is due."""
        shared, schedule = self.networks[name], self.targets
        if shared.target is None or schedule is None:
            return
        totals = self.counters.sum(dim=0)
        index = self.names.index(name)
        due = schedule.due(int(totals[ENV_STEPS]), int(totals[column]))
        made = int(self.refreshes[index])
        if due <= made:
            return
        self.refreshes[index] = due  # another worker may do it at once: both copy alike
        rate = schedule.moved(due - made)
        with torch.no_grad():
            for target, online in zip(shared.target, shared.online, strict=True):
                if rate >= 1.0 or not target.is_floating_point():
                    target.copy_(online)
                else:
                    target.lerp_(online, rate)

    def pull(self, name: str) -> None:
        """Copy the shared weights of ``name`` into the worker's network (its target's
        only when it was refreshed since)."""
        local, target = self._local[name]
        shared = self.networks[name]
        with torch.no_grad():
            torch._foreach_copy_(local, shared.online)
            index = self.names.index(name)
            refreshes = int(self.refreshes[index])
            if target is not None and shared.target is not None and refreshes != self._seen[name]:
                torch._foreach_copy_(target, shared.target)
                self._seen[name] = refreshes

    # -- in this process --------------------------------------------------------------------

    def updates(self) -> dict[int, dict[str, int]]:
        """Each worker's gradient steps applied to the shared weights, per network."""
        rows = self.counters.tolist()
        return {
            rank: dict(zip(self.names, row[NETWORKS:], strict=True))
            for rank, row in enumerate(rows)
            if rank > 0
        }
