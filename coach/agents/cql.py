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
from coach.agents.learning import Learner, td_targets
from coach.agents.q_learning import (
    BatchDQNAlgorithmParameters,
    QAgent,
    QAgentParameters,
    QLearner,
    double_q_target_values,
    greedy_target_values,
    regression_rows,
    replay_mean,
)
from coach.core.action_masks import legal_only
from coach.core.types import Batch


@dataclass(slots=True, kw_only=True)
class CQLAlgorithmParameters(BatchDQNAlgorithmParameters):
    """Double Q-learning's batch parameters and the conservative penalty."""

    alpha: float = 1.0
    """Weight of the conservative term."""

    def validate(self) -> None:
        BatchDQNAlgorithmParameters.validate(self)
        check.number("alpha", self.alpha, 0)


@dataclass(slots=True, kw_only=True)
class CQLAgentParameters(QAgentParameters):
    """A CQL agent: the value family's defaults (e-greedy, uniform replay, one Q network with
    a target copy), double Q-learning on the dataset with the CQL(H) penalty."""

    algorithm: CQLAlgorithmParameters = field(default_factory=CQLAlgorithmParameters)
    """The algorithm's parameters."""

    def agent_class(self) -> type[CQLAgent]:
        return CQLAgent


class CQLAgent(QAgent):
    """Double Q-learning whose loss keeps the values of actions outside the data low."""

    params: CQLAgentParameters

    def make_learner(self) -> Learner:
        return CQLLearner(**self.learner_arguments())


class CQLLearner(QLearner):
    """CQL's update: the double Q-learning TD regression plus ``alpha`` times the
    conservative term, logsumexp Q(s, .) - Q(s, a)."""

    algorithm: CQLAlgorithmParameters

    def learn(self, batch: Batch) -> dict[str, float]:
        algorithm = self.algorithm
        b = self.sampled(batch)
        actions = (b.actions - self.action_offset).long()
        all_q = self.action_values(self.q_network(b.states))
        q = all_q.gather(1, actions[:, None]).squeeze(1)
        with torch.no_grad():
            bootstrap = double_q_target_values if algorithm.double_q else greedy_target_values
            next_values = bootstrap(self.q_network, self.action_values, b.next_states)
            target = td_targets(b.rewards, algorithm.discount, b.terminated, next_values)
        # The soft maximum runs over the state's legal actions: the others are no choice.
        conservative = torch.logsumexp(legal_only(all_q, b.states), dim=1) - q
        rows = regression_rows(q, target, algorithm.loss, algorithm.huber_delta)
        rows = rows + algorithm.alpha * conservative
        td_errors = (q - target).detach().abs()
        loss = replay_mean(rows, td_errors, b, self.priorities)
        self.q_network.train_step(loss)
        return {
            "q_loss": loss.item(),
            "q_mean": q.detach().mean().item(),
            "td_error": td_errors.mean().item(),
        }
