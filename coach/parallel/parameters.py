"""How a run spreads over workers: the command line's ``-n``, ``--backend``,
``--ray-address`` and ``-ew``, for rollout workers that act for this process's learner (and
the learner's pacing of off-policy blocks, see `coach.parallel.distributed`) or for
asynchronous workers that each act and learn (see `coach.parallel.asynchronous`)."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from coach import validation as check
from coach.errors import CoachError
from coach.validation import InvalidParameter

BACKENDS = ("local", "ray")

WORKERS_PER_CPU = 4
"""The most workers a run starts per CPU of this machine. Each worker is a whole process (an
interpreter, torch and its environment copies), all started at once; a few per CPU hide the
time each waits for the learner, many more only share the CPUs and fill the memory."""


def most_workers(backend: str, ray_address: str | None) -> int | None:
    """The most workers this machine runs (`WORKERS_PER_CPU` per CPU) on ``backend``; ``None``
    on a Ray cluster (``ray_address``), whose CPUs are not this machine's."""
    if backend == "ray" and ray_address is not None:
        return None
    return WORKERS_PER_CPU * (os.cpu_count() or 1)


def _more_than_machine(num_workers: int, backend: str, ray_address: str | None) -> str | None:
    """Why ``num_workers`` is more than this machine runs, if it is."""
    most = most_workers(backend, ray_address)
    if most is None or num_workers <= most:
        return None
    return (
        f"at most {most} on this machine ({WORKERS_PER_CPU} per CPU of its {os.cpu_count() or 1}; "
        f"more on a Ray cluster, --backend ray --ray-address)"
    )


@dataclass(slots=True, kw_only=True)
class DistributedParameters:
    """How a run spreads its acting over workers (the command line's ``-n`` and friends)."""

    num_workers: int = 1
    """N, the rollout workers."""
    backend: str = "local"
    """``"local"`` (processes on this machine) or ``"ray"`` (Ray actors)."""
    ray_address: str | None = None
    """The Ray cluster to join (``auto`` or ``HOST:PORT``); ``None`` starts a local runtime
    bound to the loopback interface."""
    evaluation_worker: bool = False
    """Evaluate in a worker of its own, while training goes on."""
    max_policy_lag: int = 2
    """Off-policy: the most publications a block's policy may be older than the learner's."""
    block_steps: int = 100
    """Off-policy: env steps per block of a worker (summed over its copies)."""
    heatup_block_steps: int = 1000
    """Off-policy heatup: env steps per block. Random actions need no new weights, so the
    blocks are longer and their calls fewer; no longer than a fair share of the heatup."""

    def validate(self) -> None:
        if self.num_workers < 1:
            raise CoachError(f"-n needs at least one worker, got {self.num_workers}")
        too_many = _more_than_machine(self.num_workers, self.backend, self.ray_address)
        if too_many is not None:
            raise CoachError(f"-n {self.num_workers} is too many rollout workers: {too_many}")
        if self.backend not in BACKENDS:
            raise CoachError(f"unknown backend {self.backend!r}; choose one of {list(BACKENDS)}")
        if self.ray_address is not None and self.backend != "ray":
            raise CoachError("--ray-address goes with --backend ray")
        if self.max_policy_lag < 1:
            raise CoachError(f"max_policy_lag must be >= 1, got {self.max_policy_lag}")
        for name in ("block_steps", "heatup_block_steps"):
            if getattr(self, name) < 1:
                raise CoachError(f"{name} must be >= 1, got {getattr(self, name)}")


@dataclass(slots=True, kw_only=True)
class AsynchronousParameters:
    """Asynchronous workers (A3C's, Mnih et al., 2016): each owns its environment copies and
    a whole agent, learns from its own rollouts and applies its gradients to shared weights
    without locks. A preset turns them on by wrapping its graph in an
    `coach.parallel.asynchronous.AsynchronousGraphManager`; ``-n``, ``--backend`` and
    ``--ray-address`` override these fields (``-cp parallel.num_workers=4`` too)."""

    num_workers: int = 2
    """N, the asynchronous workers."""
    backend: str = "local"
    """``"local"`` (processes sharing the weights in shared memory) or ``"ray"`` (Ray actors
    sending their gradients to a parameter-holder actor)."""
    ray_address: str | None = None
    """The Ray cluster to join (``auto`` or ``HOST:PORT``); ``None`` starts a local runtime
    bound to the loopback interface."""
    report_steps: int = 200
    """Env steps (summed over its copies) a worker takes between two reports to this process:
    its episodes and losses for the logs, and the points where a budget can end."""
    final_epsilons: tuple[float, ...] = ()
    """E-greedy agents: each worker anneals its epsilon to a final value drawn from these
    (the paper's 0.1, 0.01 and 0.5); empty keeps the preset's schedule for every worker."""
    final_epsilon_probabilities: tuple[float, ...] = ()
    """The probability of each of ``final_epsilons`` (the paper's 0.4, 0.3 and 0.3)."""

    def validate(self) -> None:
        check.whole("num_workers", self.num_workers, 1)
        check.one_of("backend", self.backend, BACKENDS)
        too_many = _more_than_machine(self.num_workers, self.backend, self.ray_address)
        if too_many is not None:
            raise InvalidParameter("num_workers (-n)", f"must be {too_many}", self.num_workers)
        if self.ray_address is not None and self.backend != "ray":
            raise CoachError("--ray-address goes with --backend ray")
        check.whole("report_steps", self.report_steps, 1)
        values, chances = self.final_epsilons, self.final_epsilon_probabilities
        for value in values:
            check.number("final_epsilons", value, 0, 1)
        for value in chances:
            check.number("final_epsilon_probabilities", value, 0, 1)
        if len(values) != len(chances) or (chances and not math.isclose(sum(chances), 1.0)):
            raise InvalidParameter(
                "final_epsilon_probabilities",
                f"must hold one probability per final epsilon ({len(values)}), summing to 1",
                chances,
            )
