"""Where an agent reports its episodes and scalars: the protocol, and a log that drops
everything. The experiment logger provides the real one (`coach.logging.AgentLogger`)."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from coach.core.run_phase import RunPhase
from coach.core.types import EnvResponse


class AgentLog(Protocol):
    """Where an agent reports; the experiment logger provides one per agent."""

    def scalar(self, tag: str, value: float) -> None: ...

    def episode(
        self, phase: RunPhase, reward: float, length: int, success: float | None = None
    ) -> None:
        """A finished episode, with its ``is_success`` when the environment reports one."""


class NullLog:
    """An `AgentLog` that drops everything (unit tests, scripted agents)."""

    def scalar(self, tag: str, value: float) -> None:
        pass

    def episode(
        self, phase: RunPhase, reward: float, length: int, success: float | None = None
    ) -> None:
        pass


def log_ended_episodes(
    log: AgentLog, phase: RunPhase, done: np.ndarray, response: EnvResponse
) -> None:
    """Report each episode that ended in ``response`` (the copies in ``done``): its return,
    length and, for goal-based tasks and the levels of a hierarchy, whether it succeeded."""
    infos, returns, lengths = response.infos, response.episode_return, response.episode_length
    for i in done.nonzero()[0].tolist():  # Python ints; `item` gives Python numbers
        info = infos[i] if infos else {}
        success = float(info["is_success"]) if "is_success" in info else None
        log.episode(phase, float(returns.item(i)), int(lengths.item(i)), success)
