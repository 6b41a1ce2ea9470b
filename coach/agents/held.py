"""Agents whose steps wait for their episode's end before they reach the memory: what those
steps store needs the whole episode (MMC's Monte Carlo returns, NEC's n-step returns, DFP's
future measurements; `coach.memories.held_episodes`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from coach.agents.agent import Agent
from coach.core.types import ActionInfo, Transition
from coach.memories.held_episodes import HeldEpisodes


class HoldsEpisodes(Agent):
    """Stores each copy's steps when its episode ends (or is cut by a restart), through
    ``episodes_held``, which the subclass builds; the open episodes travel with checkpoints.
    Put it first among the bases (``class NECAgent(HoldsEpisodes, QAgent)``)."""

    episodes_held: HeldEpisodes
    """Each copy's open episode, until it ends."""

    def store(self, step: Transition, info: ActionInfo, rows: np.ndarray | None = None) -> None:
        ended = self.episodes_held.add(step, rows)
        if ended is not None and self.memory is not None:
            self.memory.store(ended)

    def end_episodes(self) -> None:
        # The episodes stop here: the open ones are finished, cut where they are.
        cut = self.episodes_held.flush()
        if cut is not None and self.memory is not None:
            self.memory.store(cut)
        super().end_episodes()

    def state_dict(self, include_memory: bool = False) -> dict[str, Any]:
        state = super().state_dict(include_memory)
        return {**state, "held_episodes": self.episodes_held.state_dict()}

    def load_state_dict(self, state: dict[str, Any], episodes_in_flight: bool = True) -> None:
        super().load_state_dict(state, episodes_in_flight)
        if episodes_in_flight:
            self.episodes_held.load_state_dict(state["held_episodes"])


__all__ = ["HoldsEpisodes"]
