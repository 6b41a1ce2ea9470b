"""What a multi-agent level talks to: the actors it drives in their slots (`SlotActor`: an
agent, or self-play's frozen opponents) and the observers that watch its steps
(`MultiAgentStepObserver`: dataset recording), with the record of what the slots did
(`Acted`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from coach.core.run_phase import RunPhase
from coach.core.types import ActionInfo, EnvResponse, Observation
from coach.multi_agent.stacked import StackedResponse


class SlotActor(Protocol):
    """What a multi-agent level drives: an `Agent`, or the frozen opponents of self-play."""

    name: str
    num_envs: int
    phase: RunPhase

    def reset(self, response: EnvResponse) -> None: ...

    def act(self, rows: np.ndarray | None = None) -> ActionInfo: ...

    def observe(
        self, response: EnvResponse, rows: np.ndarray | None = None, info: ActionInfo | None = None
    ) -> None: ...

    def begin(self, observation: Observation, rows: np.ndarray) -> None: ...

    def train(self) -> int: ...

    def state_dict(self, include_memory: bool = False) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any], episodes_in_flight: bool = True) -> None: ...


@dataclass(slots=True)
class Acted:
    """The actions some slots of one agent took in a step, for the level's observers."""

    actor: str
    """The name of the agent (or the opponents) that acted."""
    ids: np.ndarray
    """The id index each row played."""
    copies: np.ndarray
    """The environment copy of each row."""
    env_action: np.ndarray
    """Each row's action, as the environment took it."""
    behaviour: dict[str, np.ndarray]
    """The agent's behaviour behind each row (``action_probabilities`` or
    ``action_log_prob``), when it logs one."""


class MultiAgentStepObserver(Protocol):
    """Watches a multi-agent level's steps (dataset recording): the actions its slots took
    and the environment's answer, stacked over the ids."""

    def on_reset(self, stacked: StackedResponse, phase: RunPhase) -> None:
        """New episodes started in every copy."""

    def on_step(self, acted: list[Acted], stacked: StackedResponse, phase: RunPhase) -> None:
        """The slots in ``acted`` took their actions, and the environment answered."""
