"""What a run whose env steps are partly taken by workers counts, and keeps in checkpoints."""

from __future__ import annotations

from typing import Any

from coach.graph_managers.graph_manager import GraphManager
from coach.graph_managers.parameters import ScheduleParameters


class WorkersGraphManager(GraphManager):
    """A graph manager whose env steps and episodes are its own environment's plus what its
    workers report (rollout workers, `DistributedGraphManager`; asynchronous workers,
    `AsynchronousGraphManager`). The workers' counts go into checkpoints under
    ``"workers"``, so a resumed run counts on from them."""

    def __init__(self, name: str, schedule_params: ScheduleParameters) -> None:
        super().__init__(name, schedule_params)
        self.collected_steps = 0
        """Env steps the workers took (heatup and training)."""
        self.collected_episodes = 0
        """Episodes the workers finished."""

    def _total_env_steps(self) -> int:
        own = self.environment.total_steps if self.environment is not None else 0
        return own + self.collected_steps

    def _episodes(self) -> int:
        own = self.environment.total_episodes if self.environment is not None else 0
        return own + self.collected_episodes

    def state_dict(self, include_memory: bool = False) -> dict[str, Any]:
        state = super().state_dict(include_memory)
        state["workers"] = {
            "collected_steps": self.collected_steps,
            "collected_episodes": self.collected_episodes,
        }
        return state

    def load_state_dict(self, state: dict[str, Any], whole_run: bool = True) -> None:
        super().load_state_dict(state, whole_run)
        workers = state.get("workers")
        if whole_run and workers is not None:
            self.collected_steps = int(workers["collected_steps"])
            self.collected_episodes = int(workers["collected_episodes"])
