"""Where an agent reports its episodes and scalars: the protocol, and a log that drops
everything. The experiment logger provides the real one (`coach.logging.AgentLogger`)."""

from __future__ import annotations

from typing import Protocol

from coach.core.run_phase import RunPhase


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
