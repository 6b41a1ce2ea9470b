"""An agent's parameters: its algorithm, exploration, memory, networks and filters, the root
of the tree a preset writes and ``-cp`` overrides reach (``agent.algorithm.discount``).

Every algorithm's parameters derive from `AgentParameters` beside its agent
(`DQNAgentParameters` in `coach.agents.dqn`) and name the agent they build (`agent_class`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from coach import validation as check
from coach.agents.algorithm import AlgorithmParameters
from coach.exploration.exploration_policy import ExplorationParameters
from coach.filters.pipeline import InputFilter, OutputFilter
from coach.memories.experience_replay import ReplayParameters
from coach.memories.memory import MemoryParameters
from coach.networks.parameters import NetworkParameters
from coach.validation import InvalidParameter


@dataclass(slots=True, kw_only=True)
class AgentParameters:
    """An agent: its algorithm, exploration, memory, networks and filters."""

    algorithm: AlgorithmParameters = field(default_factory=AlgorithmParameters)
    """The algorithm's parameters."""
    exploration: ExplorationParameters | None = None
    """Exploration parameters (built with the action space and the agent's generator)."""
    memory: MemoryParameters | None = None
    """Memory parameters (built with the spaces and the agent's generator)."""
    network_wrappers: dict[str, NetworkParameters] = field(default_factory=dict)
    """The agent's networks by name; each has its own optimizer and loss."""
    input_filter: InputFilter = field(default_factory=InputFilter)
    """What observations and rewards go through before the agent sees them."""
    output_filter: OutputFilter = field(default_factory=OutputFilter)
    """What actions go through on their way to the environment."""
    name: str = "agent"
    """The agent's name in logs and TensorBoard runs."""

    def validate(self) -> None:
        check.component("exploration", self.exploration, "EGreedyParameters()")
        check.component("memory", self.memory, "ExperienceReplayParameters()")
        check.file_name("name", self.name)  # it names the agent's TensorBoard run folder
        batch_size = self.algorithm.batch_size
        memory: object = self.memory  # any memory parameters; replay ones have a size
        if isinstance(memory, ReplayParameters) and memory.max_size < batch_size:
            raise InvalidParameter(
                "memory.max_size",
                f"must be >= algorithm.batch_size ({batch_size})",
                memory.max_size,
            )

    def validate_for_environment(self, num_envs: int) -> None:
        """Check these parameters against the ``num_envs`` environment copies whose steps the
        agent learns from together."""

    def agent_class(self) -> type[Any]:
        """The agent these parameters build (a `coach.agents.agent.Agent`)."""
        raise NotImplementedError(f"{type(self).__name__} does not name its agent class")
