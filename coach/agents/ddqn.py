"""Double DQN (van Hasselt et al., 2016, "Deep Reinforcement Learning with Double Q-learning").

The online network picks the next action, the target network values it: the max over noisy
estimates no longer feeds its own overestimate back into the targets.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from coach.agents.dqn import DQNAgent, DQNAgentParameters


def double_q_values(agent: DQNAgent, next_states: dict[str, torch.Tensor]) -> torch.Tensor:
    """Q_target(s', argmax_a' Q_online(s', a')), shape (B,); for any Q agent."""
    best = agent.action_values(agent.q_network(next_states)).argmax(dim=1, keepdim=True)
    target = agent.action_values(agent.q_network.target_predict(next_states))
    return target.gather(1, best).squeeze(1)


@dataclass(slots=True, kw_only=True)
class DDQNAgentParameters(DQNAgentParameters):
    """DQN's parameters; the agent bootstraps with double Q-learning."""

    def agent_class(self) -> type[DDQNAgent]:
        return DDQNAgent


class DDQNAgent(DQNAgent):
    """DQN whose bootstrap action comes from the online network."""

    def bootstrap_values(self, next_states: dict[str, torch.Tensor]) -> torch.Tensor:
        return double_q_values(self, next_states)
