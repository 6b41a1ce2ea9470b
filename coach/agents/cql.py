"""Conservative Q-learning for discrete actions, CQL(H) (Kumar et al., 2020, "Conservative
Q-Learning for Offline Reinforcement Learning").

On a fixed dataset, Q-learning's max over actions picks the ones whose values nothing in the
data corrects. CQL adds to the (double) Q-learning loss a term that pushes the Q-values of
every action down (their log-sum-exp) and those of the logged action up:

    loss = TD loss + alpha * mean( logsumexp_a Q(s, a) - Q(s, a_data) )

so the learned values are a lower bound where the data is thin, and the greedy policy stays
near the dataset's actions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from coach import validation as check
from coach.agents.ddqn import DDQNAgent, DDQNAgentParameters
from coach.agents.dqn import BatchDQNAlgorithmParameters
from coach.core.types import Batch


@dataclass(slots=True, kw_only=True)
class CQLAlgorithmParameters(BatchDQNAlgorithmParameters):
    """DDQN's parameters and the conservative penalty."""

    alpha: float = 1.0
    """Weight of the conservative term."""

    def validate(self) -> None:
        BatchDQNAlgorithmParameters.validate(self)
        check.number("alpha", self.alpha, 0)


@dataclass(slots=True, kw_only=True)
class CQLAgentParameters(DDQNAgentParameters):
    """A DDQN agent with the CQL(H) penalty."""

    algorithm: CQLAlgorithmParameters = field(default_factory=CQLAlgorithmParameters)
    """The algorithm's parameters."""

    def agent_class(self) -> type[CQLAgent]:
        return CQLAgent


class CQLAgent(DDQNAgent):
    """DDQN whose loss keeps the values of actions outside the data low."""

    params: CQLAgentParameters

    def td_loss(
        self, b: Batch, actions: torch.Tensor, discount: torch.Tensor | float
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        all_q = self.action_values(self.q_network(b.states))
        q = all_q.gather(1, actions[:, None]).squeeze(1)
        rows, errors, detached = self.regression(q, b, discount)
        conservative = torch.logsumexp(all_q, dim=1) - q
        return rows + self.params.algorithm.alpha * conservative, errors, detached
