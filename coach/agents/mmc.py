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

import numpy as np
import torch
from gymnasium import spaces

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
from coach.core.types import ActionInfo, Batch, EnvResponse, Transition
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


class MMCAgent(QAgent):
    """Mixed Monte Carlo: DQN whose targets mix in each step's episode return."""

    params: MMCAgentParameters

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.returns = MonteCarloReturns(self.algorithm.discount, self.num_envs)
        """Each copy's open episode, until it ends."""

    def make_learner(self) -> Learner:
        return MMCLearner(**self.learner_arguments())

    def memory_extras(self) -> dict[str, spaces.Space]:
        return {MC_RETURN: MC_RETURN_SPACE}

    def store(self, step: Transition, info: ActionInfo, rows: np.ndarray | None = None) -> None:
        ended = self.returns.add(step, rows)
        if ended is not None and self.memory is not None:
            self.memory.store(ended)

    def reset(self, response: EnvResponse) -> None:
        # Episodes are about to restart: the open ones are stored, cut where they are.
        cut = self.returns.flush()
        if cut is not None and self.memory is not None:
            self.memory.store(cut)
        super().reset(response)

    def state_dict(self, include_memory: bool = False) -> dict[str, Any]:
        return {**super().state_dict(include_memory), "monte_carlo": self.returns.state_dict()}

    def load_state_dict(self, state: dict[str, Any], episodes_in_flight: bool = True) -> None:
        super().load_state_dict(state, episodes_in_flight)
        if episodes_in_flight:
            self.returns.load_state_dict(state["monte_carlo"])


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
