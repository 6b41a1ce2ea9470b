"""An agent's parameters: its algorithm, exploration, memory, networks and filters, the root
of the tree a preset writes and ``-cp`` overrides reach (``agent.algorithm.discount``).

Every algorithm's parameters derive from `AgentParameters` beside its agent
(`DQNAgentParameters` in `coach.agents.dqn`) and name the agent they build (`agent_class`),
each class for itself: a subclass that inherited its parent's ``agent_class`` would train
the parent's algorithm, whatever fields it adds, so making one is refused
(`check_names_its_agent`). A base meant only to be derived from says so (``abstract``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from coach import validation as check
from coach.agents.algorithm import AlgorithmParameters
from coach.errors import CoachError
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

    abstract: ClassVar[bool] = False
    """Whether this class is a base of other parameters classes only, and names no agent
    itself (read from each class's own body: a subclass of such a base is not one)."""

    def __post_init__(self) -> None:
        check_names_its_agent(self)

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
        """The agent these parameters build (a `coach.agents.agent.Agent`); every concrete
        parameters class defines it itself."""
        raise NotImplementedError(f"{type(self).__name__} does not name its agent class")


_CHECKED: set[type] = set()


def check_names_its_agent(params: AgentParameters) -> None:
    """Refuse parameters whose class does not name the agent it builds itself.

    Raises:
        CoachError: the class inherits ``agent_class`` and is not an abstract base: it
            would build its parent's agent, which never reads what the subclass adds.
    """
    cls = type(params)
    if cls in _CHECKED:
        return
    owner = next(c for c in cls.__mro__ if "agent_class" in c.__dict__)
    if owner is not cls and not cls.__dict__.get("abstract", False):
        try:
            builds = f", which builds {qualified(params.agent_class())}"
        except NotImplementedError:
            builds = ""
        raise CoachError(
            f"{qualified(cls)} inherits agent_class from {owner.__qualname__}{builds}: "
            f"parameters name the agent they build, so define agent_class on "
            f"{cls.__qualname__} (returning your agent class, or the parent's to train that)"
        )
    _CHECKED.add(cls)


def qualified(cls: type) -> str:
    """``module.Class``: how logs and params.yaml name a class."""
    return f"{cls.__module__}.{cls.__qualname__}"


def agent_classes(roots: dict[str, Any]) -> dict[str, str]:
    """The agent class of every agent's parameters under ``roots`` (a graph's parameters),
    by the parameters' path (``agent``, ``agents.adversary``, ``agents.0``): ``module.Class``."""
    from coach.parameter_tree import parameter_dataclasses

    return {
        path: qualified(node.agent_class())
        for path, node in parameter_dataclasses(roots)
        if isinstance(node, AgentParameters)
    }
