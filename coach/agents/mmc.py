"""Mixed Monte Carlo (Ostrovski, Bellemare, van den Oord and Munos, "Count-Based Exploration
with Neural Density Models", ICML 2017; Bellemare et al., 2016).

DQN's update whose target mixes in the Monte Carlo return of the step's episode:

    target = (1 - beta) * (r + discount * max_b Q'(s', b)) + beta * G,

with ``G`` the discounted return from the step to the episode's end. A step reaches the
replay memory when its episode ends, with ``G`` beside it (`coach.memories.monte_carlo`); an
episode cut by a time limit or a restart carries the rewards seen up to the cut.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from gymnasium import spaces

from coach import validation as check
from coach.agents.dqn import DQNAgentParameters
from coach.agents.held import HoldsEpisodes
from coach.agents.learning import Learner
from coach.agents.q_learning import (
    DQNAlgorithmParameters,
    QAgent,
    QLearner,
    regress_q,
    taken_q,
    td_target,
)
from coach.core.types import Batch
from coach.memories.monte_carlo import MC_RETURN, MC_RETURN_SPACE, MonteCarloReturns


@dataclass(slots=True, kw_only=True)
class MMCAlgorithmParameters(DQNAlgorithmParameters):
    """MMC's parameters: DQN's (one-step: the Monte Carlo return is the long one), and the
    mixing rate."""

    monte_carlo_mixing_rate: float = 0.1
    """The share of the Monte Carlo return in the target (beta)."""

    def validate(self) -> None:
        DQNAlgorithmParameters.validate(self)
        check.number("monte_carlo_mixing_rate", self.monte_carlo_mixing_rate, 0, 1)
        if self.n_step != 1:
            raise check.InvalidParameter(
                "n_step", "must be 1: MMC mixes in whole-episode returns instead", self.n_step
            )


@dataclass(slots=True, kw_only=True)
class MMCAgentParameters(DQNAgentParameters):
    """An MMC agent: DQN's parts, its steps stored when their episode ends, with their
    returns."""

    algorithm: MMCAlgorithmParameters = field(default_factory=MMCAlgorithmParameters)
    """The algorithm's parameters."""

    def agent_class(self) -> type[QAgent]:
        return MMCAgent


class MMCAgent(HoldsEpisodes, QAgent):
    """Mixed Monte Carlo: DQN whose targets mix in each step's episode return."""

    params: MMCAgentParameters

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.episodes_held = MonteCarloReturns(self.algorithm.discount, self.num_envs)

    def make_learner(self) -> Learner:
        return MMCLearner(**self.learner_arguments())

    def memory_extras(self) -> dict[str, spaces.Space]:
        return {MC_RETURN: MC_RETURN_SPACE}


class MMCLearner(QLearner):
    """MMC's update: Q(s, a) regressed on the TD target mixed with the Monte Carlo return."""

    algorithm: MMCAlgorithmParameters

    def learn(self, batch: Batch) -> dict[str, float | torch.Tensor]:
        b = self.sampled(batch)
        q, _ = taken_q(self, b)
        with torch.no_grad():
            rate = self.algorithm.monte_carlo_mixing_rate
            target = (1 - rate) * td_target(self, b) + rate * b.extras[MC_RETURN]
        return regress_q(self, b, q, target)


__all__ = ["MMCAgent", "MMCAgentParameters", "MMCAlgorithmParameters", "MMCLearner"]
