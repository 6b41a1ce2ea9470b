"""How a run spreads its acting over rollout workers: the command line's ``-n``,
``--backend``, ``--ray-address`` and ``-ew``, and the learner's pacing of off-policy blocks
(see `coach.parallel.distributed`)."""

from __future__ import annotations

from dataclasses import dataclass

from coach.errors import CoachError

BACKENDS = ("local", "ray")


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
        if self.backend not in BACKENDS:
            raise CoachError(f"unknown backend {self.backend!r}; choose one of {list(BACKENDS)}")
        if self.ray_address is not None and self.backend != "ray":
            raise CoachError("--ray-address goes with --backend ray")
        if self.max_policy_lag < 1:
            raise CoachError(f"max_policy_lag must be >= 1, got {self.max_policy_lag}")
        for name in ("block_steps", "heatup_block_steps"):
            if getattr(self, name) < 1:
                raise CoachError(f"{name} must be >= 1, got {getattr(self, name)}")
