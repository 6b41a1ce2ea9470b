"""Multi-agent levels: several agents on one environment, by agent id (`MultiAgentGraphManager`,
`MultiAgentLevelManager`), with shared, independent or grouped agents, and self-play."""

from coach.multi_agent.graph_manager import MultiAgentGraphManager
from coach.multi_agent.level import MultiAgentLevelManager
from coach.multi_agent.seats import Seats
from coach.multi_agent.self_play import OpponentPool, SelfPlayLevelManager, SelfPlayParameters

__all__ = [
    "MultiAgentGraphManager",
    "MultiAgentLevelManager",
    "OpponentPool",
    "Seats",
    "SelfPlayLevelManager",
    "SelfPlayParameters",
]
