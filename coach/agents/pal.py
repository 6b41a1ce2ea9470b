"""Persistent Advantage Learning (Bellemare, Ostrovski, Guez, Thomas and Munos, "Increasing
the Action Gap: New Operators for Reinforcement Learning", AAAI 2016).

DQN's update with a larger action gap. With the target network's values ``Q'``, the TD
target ``T = r + discount * max_b Q'(s', b)`` becomes advantage learning's

    T_AL = T - alpha * (max_b Q'(s, b) - Q'(s, a)),

which lowers the targets of the actions that are not the best by their gap; persistent
advantage learning takes the larger of that and the same correction at the next state,

    T_PAL = max(T_AL, T - alpha * (max_b Q'(s', b) - Q'(s', a))),

so an action that stays the best in the next state keeps its value. Where the episode
terminated, the next state has no value and ``T_AL`` stands.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from coach import validation as check
from coach.agents.dqn import DQNAgentParameters
from coach.agents.learning import Learner
from coach.agents.q_learning import (
    DQNAlgorithmParameters,
    QAgent,
    QLearner,
    regress_q,
    taken_q,
    td_target,
)
from coach.core.action_masks import legal_only
from coach.core.types import Batch


@dataclass(slots=True, kw_only=True)
class PALAlgorithmParameters(DQNAlgorithmParameters):
    """PAL's parameters: DQN's, and the gap correction."""

    pal_alpha: float = 0.9
    """How much of the action gap the targets lose (the paper's alpha)."""
    persistent: bool = True
    """Persistent advantage learning; ``False``: advantage learning alone."""

    def validate(self) -> None:
        DQNAlgorithmParameters.validate(self)
        check.number("pal_alpha", self.pal_alpha, 0, 1)


@dataclass(slots=True, kw_only=True)
class PALAgentParameters(DQNAgentParameters):
    """A PAL agent: DQN's parts (e-greedy, replay, a Q network and its target) with PAL's
    targets."""

    algorithm: PALAlgorithmParameters = field(default_factory=PALAlgorithmParameters)
    """The algorithm's parameters."""

    def agent_class(self) -> type[QAgent]:
        return PALAgent


class PALAgent(QAgent):
    """Persistent Advantage Learning: DQN with the action gap widened in its targets."""

    params: PALAgentParameters

    def make_learner(self) -> Learner:
        return PALLearner(**self.learner_arguments())


def action_gaps(values: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """``max_b Q(s, b) - Q(s, a)`` per row (B,), from Q-values (B, A) and actions (B,)."""
    return values.max(dim=1).values - values.gather(1, actions[:, None]).squeeze(1)


def pal_targets(
    td: torch.Tensor,
    gap: torch.Tensor,
    next_gap: torch.Tensor | None,
    terminated: torch.Tensor,
    alpha: float,
) -> torch.Tensor:
    """PAL's targets (B,) from the TD targets, the action gaps in the states and, for the
    persistent operator, in the next states (``None``: advantage learning alone)."""
    advantage = td - alpha * gap
    if next_gap is None:
        return advantage
    persistent = torch.where(terminated, advantage, td - alpha * next_gap)
    return torch.maximum(advantage, persistent)


class PALLearner(QLearner):
    """PAL's update: Q(s, a) regressed on the (persistent) advantage-learning target."""

    algorithm: PALAlgorithmParameters

    def learn(self, batch: Batch) -> dict[str, float | torch.Tensor]:
        algorithm = self.algorithm
        b = self.sampled(batch)
        q, actions = taken_q(self, b)
        with torch.no_grad():
            td = td_target(self, b)
            now = legal_only(self.action_values(self.q_network.target_predict(b.states)), b.states)
            next_gap = None
            if algorithm.persistent:
                after = self.action_values(self.q_network.target_predict(b.next_states))
                next_gap = action_gaps(legal_only(after, b.next_states), actions)
            terminated = b.terminated if b.terminated.dtype == torch.bool else b.terminated != 0
            target = pal_targets(
                td, action_gaps(now, actions), next_gap, terminated, algorithm.pal_alpha
            )
        return regress_q(self, b, q, target)


__all__ = [
    "PALAgent",
    "PALAgentParameters",
    "PALAlgorithmParameters",
    "PALLearner",
    "action_gaps",
    "pal_targets",
]
