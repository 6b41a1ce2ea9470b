"""Graph managers: what builds the levels of a run and drives its phases."""

from coach.errors import RunInterrupted
from coach.graph_managers.basic_rl import BasicRLGraphManager
from coach.graph_managers.evaluation import EvaluationResult
from coach.graph_managers.graph_manager import GraphManager
from coach.graph_managers.hrl import HACGraphManager, HierarchyParameters, HRLGraphManager
from coach.graph_managers.parameters import RunContext, ScheduleParameters

__all__ = [
    "BasicRLGraphManager",
    "EvaluationResult",
    "GraphManager",
    "HACGraphManager",
    "HRLGraphManager",
    "HierarchyParameters",
    "RunContext",
    "RunInterrupted",
    "ScheduleParameters",
]
