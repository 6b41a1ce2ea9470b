"""Shared weights for asynchronous workers on Ray (``--backend ray``): a parameter-holder
actor owns the weights, the optimizers and the target networks; the workers send it their
gradients and get the new weights back.

Ray actors share no memory, so the holder plays the part shared memory plays on one machine
(`coach.parallel.hogwild`): each worker's `SharedStep` sends the gradients of a gradient
step (with the training env steps and episodes since its last call, and its learning rate)
and copies the weights it gets back into its network. The holder serves one call at a time, in
the order they come, so updates are applied whole; the workers still compute their
gradients on weights other workers have moved on since, as in Hogwild!. It counts every
worker's env steps, episodes and gradient steps (the global clock), refreshes the target
networks when that clock says so, and sends the clock back with the weights: the workers'
learning rate schedules follow it. This process reads the weights back for evaluations and
checkpoints.
"""

from __future__ import annotations

from typing import Any

import torch

from coach.agents.agent import Agent
from coach.agents.learning import Clock
from coach.networks.network_wrapper import NetworkWrapper
from coach.networks.optimizer import AdamW
from coach.parallel.hogwild import SharedStep, TargetSchedule


class ParameterHolder:
    """The weights asynchronous workers share, in a Ray actor of their own.

    Args:
        networks: Per network: its `NetworkWrapper.state_dict` (online, optimizer, target)
            and the names of its parameters, in the optimizer's order.
        hyperparameters: Per network: the optimizer's ``lr``, ``betas``, ``eps`` and
            ``weight_decay``.
        targets: When the target networks are refreshed (``None``: never).
        env_steps: Training env steps taken before (a resumed run's).
        updates: Each network's gradient steps taken before.
        episodes: Episodes finished before.
    """

    def __init__(
        self,
        networks: dict[str, tuple[dict[str, Any], list[str]]],
        hyperparameters: dict[str, dict[str, Any]],
        targets: TargetSchedule | None,
        env_steps: int = 0,
        updates: int = 0,
        episodes: int = 0,
    ) -> None:
        torch.set_num_threads(1)
        self.online: dict[str, dict[str, torch.Tensor]] = {}
        self.target: dict[str, dict[str, torch.Tensor] | None] = {}
        self.optimizers: dict[str, torch.optim.Optimizer] = {}
        for name, (state, parameter_names) in networks.items():
            online = {key: value.clone() for key, value in state["online"].items()}
            params = [online[key] for key in parameter_names]
            optimizer = AdamW(params, fused=True, **hyperparameters[name])
            optimizer.load_state_dict(state["optimizer"])
            self.online[name], self.optimizers[name] = online, optimizer
            target = state.get("target")
            self.target[name] = {k: v.clone() for k, v in target.items()} if target else None
        self.targets = targets
        self.env_steps = {0: env_steps}
        """Training env steps per worker rank (rank 0: before this run)."""
        self.episodes = {0: episodes}
        """Episodes per worker rank."""
        self.updates = {name: {0: updates} for name in networks}
        """Gradient steps per network and worker rank."""
        due = targets.due(env_steps, updates) if targets is not None else 0
        self.refreshes = dict.fromkeys(networks, due)

    def weights(self, name: str) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor] | None]:
        """The online and target weights of network ``name``."""
        return self.online[name], self.target[name]

    def apply(
        self,
        rank: int,
        name: str,
        grads: list[torch.Tensor],
        env_steps: int,
        episodes: int,
        lr: float,
    ) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor] | None, int, Clock]:
        """Worker ``rank``'s gradient step on network ``name`` (at its learning rate ``lr``),
        after ``env_steps`` more training env steps and ``episodes`` more episodes; the
        network's online weights, its target's, how many refreshes that target had, and the
        global clock."""
        self.env_steps[rank] = self.env_steps.get(rank, 0) + env_steps
        self.episodes[rank] = self.episodes.get(rank, 0) + episodes
        optimizer = self.optimizers[name]
        group = optimizer.param_groups[0]
        group["lr"] = lr
        for p, grad in zip(group["params"], grads, strict=True):
            p.grad = grad
        optimizer.step()
        for p in group["params"]:
            p.grad = None
        counts = self.updates[name]
        counts[rank] = counts.get(rank, 0) + 1
        self._refresh_target(name)
        return self.online[name], self.target[name], self.refreshes[name], self.clock()

    def clock(self) -> Clock:
        """The global clock: every worker's counts summed (the gradient steps of the network
        that took the most)."""
        updates = max((sum(counts.values()) for counts in self.updates.values()), default=0)
        return Clock(updates, sum(self.env_steps.values()), sum(self.episodes.values()))

    def _refresh_target(self, name: str) -> None:
        target, schedule = self.target[name], self.targets
        if target is None or schedule is None:
            return
        due = schedule.due(sum(self.env_steps.values()), sum(self.updates[name].values()))
        if due <= self.refreshes[name]:
            return
        rate = schedule.moved(due - self.refreshes[name])
        self.refreshes[name] = due
        with torch.no_grad():
            for key, online in self.online[name].items():
                if rate >= 1.0 or not online.is_floating_point():
                    target[key].copy_(online)
                else:
                    target[key].lerp_(online, rate)

    def state(self) -> dict[str, dict[str, Any]]:
        """Every network as `NetworkWrapper.load_state_dict` takes it."""
        out: dict[str, dict[str, Any]] = {}
        for name, online in self.online.items():
            state: dict[str, Any] = {
                "online": online,
                "optimizer": self.optimizers[name].state_dict(),
            }
            if self.target[name] is not None:
                state["target"] = self.target[name]
            out[name] = state
        return out

    def worker_updates(self) -> dict[int, dict[str, int]]:
        """Each worker's gradient steps applied, per network."""
        ranks = sorted({r for counts in self.updates.values() for r in counts if r > 0})
        return {r: {name: c.get(r, 0) for name, c in self.updates.items()} for r in ranks}


def holder_arguments(
    agent: Agent,
) -> tuple[dict[str, tuple[dict[str, Any], list[str]]], dict[str, dict[str, Any]]]:
    """`ParameterHolder`'s first two arguments, for ``agent``'s networks that learn."""
    networks, hyperparameters = {}, {}
    for name, net in agent.networks.items():
        if net.optimizer is None:
            continue
        networks[name] = (net.state_dict(), [key for key, _ in net.online.named_parameters()])
        group = net.optimizer.param_groups[0]
        hyperparameters[name] = {key: group[key] for key in ("lr", "betas", "eps", "weight_decay")}
    return networks, hyperparameters


class HolderClient:
    """A Ray worker's side of the `ParameterHolder`: its networks' gradient steps are sent to
    it (`SharedStep`), their weights come back from it.

    Args:
        holder: The holder actor's handle.
        names: The networks it holds.
    """

    def __init__(self, holder: Any, names: list[str]) -> None:
        self.holder = holder
        self.names = names
        self.rank = 0
        self._pending_steps = 0
        """Training env steps not yet sent."""
        self._pending_episodes = 0
        """Episodes not yet sent."""
        self._clock = Clock(0, 0, 0)
        """The global clock as the holder last sent it."""
        self._seen: dict[str, int] = {}

    def __getstate__(self) -> dict[str, Any]:
        return {"holder": self.holder, "names": self.names}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.holder, self.names = state["holder"], state["names"]
        self.rank, self._pending_steps, self._pending_episodes, self._seen = 0, 0, 0, {}
        self._clock = Clock(0, 0, 0)

    def connect(self, rank: int, networks: dict[str, NetworkWrapper]) -> None:
        import ray

        self.rank = rank
        for name in self.names:
            network = networks[name]
            optimizer = network.optimizer
            assert optimizer is not None, "a worker's agent learns"
            groups = optimizer.param_groups  # its learning rate goes with each step

            def apply(grads: list[torch.Tensor], name: str = name, net: Any = network) -> None:
                steps, self._pending_steps = self._pending_steps, 0
                episodes, self._pending_episodes = self._pending_episodes, 0
                lr = float(net.optimizer.param_groups[0]["lr"])
                call = self.holder.apply.remote(self.rank, name, grads, steps, episodes, lr)
                online, target, refreshes, self._clock = ray.get(call)
                self._load(net, name, online, target, refreshes)

            network.optimizer = SharedStep(list(network.online.parameters()), apply, groups)
            online, target = ray.get(self.holder.weights.remote(name))
            self._seen[name] = -1
            self._load(network, name, online, target, 0)
        self._clock = ray.get(self.holder.clock.remote())

    def _load(
        self,
        network: NetworkWrapper,
        name: str,
        online: dict[str, torch.Tensor],
        target: dict[str, torch.Tensor] | None,
        refreshes: int,
    ) -> None:
        network.online.load_state_dict(online)
        if network.target is not None and target is not None and refreshes != self._seen[name]:
            network.target.load_state_dict(target)
            self._seen[name] = refreshes

    def count(self, env_steps: int, episodes: int) -> None:
        self._pending_steps += env_steps  # sent with the next gradient step
        self._pending_episodes += episodes

    def clock(self) -> Clock:
        """The global clock as the holder last sent it, with this worker's counts since."""
        seen = self._clock
        return Clock(
            seen.training_steps,
            seen.training_env_steps + self._pending_steps,
            seen.episodes + self._pending_episodes,
        )
