"""Parameters name the agent they build, each class for itself: a subclass that inherited its
parent's ``agent_class`` would train the parent's algorithm, whatever it adds, and is refused
when made; what a graph's parameters build is read back by path (`agent_classes`)."""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field

import pytest

import coach.agents
from coach.agents.dqn import DQNAgent, DQNAgentParameters, DQNAlgorithmParameters
from coach.agents.on_policy import OnPolicyAgentParameters
from coach.agents.parameters import AgentParameters, agent_classes
from coach.errors import CoachError
from coach.presets import load_preset


@dataclass(slots=True, kw_only=True)
class _MunchausenAlgorithm(DQNAlgorithmParameters):
    alpha: float = 0.9


@dataclass(slots=True, kw_only=True)
class _Forgot(DQNAgentParameters):
    """A new algorithm's parameters that forgot to name the new agent."""

    algorithm: _MunchausenAlgorithm = field(default_factory=_MunchausenAlgorithm)


class _MunchausenAgent(DQNAgent):
    pass


@dataclass(slots=True, kw_only=True)
class _Named(DQNAgentParameters):
    algorithm: _MunchausenAlgorithm = field(default_factory=_MunchausenAlgorithm)

    def agent_class(self) -> type[DQNAgent]:
        return _MunchausenAgent


def test_parameters_that_inherit_their_parents_agent_are_refused_when_made() -> None:
    with pytest.raises(CoachError) as error:
        _Forgot()
    message = str(error.value)
    assert message.startswith(f"{__name__}._Forgot inherits agent_class from DQNAgentParameters")
    assert "which builds coach.agents.dqn.DQNAgent" in message
    assert "define agent_class on _Forgot" in message


def test_parameters_that_name_their_agent_build_it() -> None:
    assert _Named().agent_class() is _MunchausenAgent
    assert agent_classes({"agent": _Named()}) == {"agent": f"{__name__}._MunchausenAgent"}


def test_an_abstract_base_is_one_for_itself_alone() -> None:
    # The on-policy base names no agent; a subclass of it that names none is refused.
    OnPolicyAgentParameters()

    @dataclass(slots=True, kw_only=True)
    class Unnamed(OnPolicyAgentParameters):
        pass

    with pytest.raises(CoachError, match="inherits agent_class from AgentParameters: "):
        Unnamed()


def _subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub, *_subclasses(sub)}
    return found


def test_every_parameters_class_coach_ships_names_its_agent_or_is_abstract() -> None:
    for module in pkgutil.iter_modules(coach.agents.__path__):
        importlib.import_module(f"coach.agents.{module.name}")
    shipped = [c for c in _subclasses(AgentParameters) if c.__module__.startswith("coach.")]
    assert len(shipped) >= 25
    for cls in shipped:
        assert "agent_class" in cls.__dict__ or cls.__dict__.get("abstract"), cls


@pytest.mark.parametrize(
    ("preset", "expected"),
    [
        ("CartPole_DQN", {"agent": "coach.agents.dqn.DQNAgent"}),
        (
            "SimpleTag_DQN_vs_ClippedPPO",
            {
                "agents.predators": "coach.agents.dqn.DQNAgent",
                "agents.prey": "coach.agents.clipped_ppo.ClippedPPOAgent",
            },
        ),
        ("Pendulum_HAC", {f"agents.{i}": "coach.agents.hac.HACAgent" for i in (0, 1)}),
    ],
)
def test_a_graphs_agent_classes_are_read_by_path(preset: str, expected: dict[str, str]) -> None:
    assert agent_classes(load_preset(preset).graph_manager.parameters()) == expected
