"""N-step Q-learning, in two forms.

- `NStepQAgentParameters`: DQN whose targets sum n rewards before they bootstrap. The n-step
  transitions are built before they reach the replay memory (see `coach.memories.n_step`),
  so a replayed row carries its own return and discount g^k, correct across terminations
  and truncations inside the window (Sutton and Barto, 2018, ch. 7). Double Q-learning is on
  by default, as most n-step learners use it.
- `RolloutNStepQAgentParameters`: n-step Q-learning as Mnih et al. (2016, "Asynchronous
  Methods for Deep Reinforcement Learning", algorithm S2) published it, without replay:
  the agent acts for ``t_max`` steps (``memory.rollout_length``), then takes one gradient
  step on that block, each step's target the discounted rewards to the block's end
  bootstrapped from the target network there (or, with ``targets_horizon="one_step"``,
  asynchronous one-step Q-learning's ``r + g max_a Q_target(s', a)``). Its workers, each
  with an epsilon schedule of its own and a shared target network, are
  `coach.parallel.asynchronous`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import torch

from coach import validation as check
from coach.agents.dqn import DQNAgent, DQNAgentParameters, DQNAlgorithmParameters
from coach.agents.learning import Clock, Learner, train_on_full_block
from coach.agents.q_learning import (
    QAgent,
    QLearner,
    double_q_target_values,
    greedy_target_values,
    regress_q,
    taken_q,
)
from coach.core.run_phase import RunPhase
from coach.core.types import ActionInfo, Transition
from coach.errors import CoachError
from coach.memories.memory import MemoryParameters
from coach.memories.rollout import Rollout, RolloutParameters
from coach.validation import InvalidParameter

HORIZONS = ("n_step", "one_step")


@dataclass(slots=True, kw_only=True)
class NStepQAlgorithmParameters(DQNAlgorithmParameters):
    """DQN's algorithm parameters with n-step returns."""

    n_step: int = 3
    """Rewards summed before bootstrapping."""
    double_q: bool = True
    """Bootstrap with double Q-learning."""


@dataclass(slots=True, kw_only=True)
class NStepQAgentParameters(DQNAgentParameters):
    """An n-step double Q-learning agent."""

    algorithm: NStepQAlgorithmParameters = field(default_factory=NStepQAlgorithmParameters)
    """The algorithm's parameters."""

    def agent_class(self) -> type[QAgent]:
        return DQNAgent


@dataclass(slots=True, kw_only=True)
class RolloutNStepQAlgorithmParameters(DQNAlgorithmParameters):
    """The parameters of n-step Q-learning from rollout blocks. The block's length
    (``memory.rollout_length``, the paper's t_max) is the horizon: ``n_step`` stays 1."""

    targets_horizon: str = "n_step"
    """``"n_step"``: each step's target sums the rewards to the block's end (asynchronous
    n-step Q-learning); ``"one_step"``: ``r + g max_a Q_target(s', a)`` (one-step)."""
    batch_size: int = 32
    """Steps per gradient step: a block of t_max steps x env copies no larger is one step
    (the paper's)."""

    def validate(self) -> None:
        DQNAlgorithmParameters.validate(self)
        check.one_of("targets_horizon", self.targets_horizon, HORIZONS)
        if self.n_step != 1:
            raise InvalidParameter(
                "n_step", "must be 1: the rollout block's length is the horizon", self.n_step
            )


@dataclass(slots=True, kw_only=True)
class RolloutNStepQAgentParameters(DQNAgentParameters):
    """An n-step Q-learning agent that learns from each fresh block of ``t_max`` steps (no
    replay), e-greedy, with a target network."""

    algorithm: RolloutNStepQAlgorithmParameters = field(
        default_factory=RolloutNStepQAlgorithmParameters
    )
    """The algorithm's parameters."""
    memory: MemoryParameters | None = field(
        default_factory=lambda: RolloutParameters(rollout_length=5)
    )
    """The block: t_max = 5 steps per env copy."""

    def validate(self) -> None:
        if not isinstance(self.memory, RolloutParameters):
            raise InvalidParameter(
                "memory",
                "must be RolloutParameters (the agent learns from fresh blocks)",
                self.memory,
            )
        DQNAgentParameters.validate(self)

    def agent_class(self) -> type[QAgent]:
        return RolloutNStepQAgent


class RolloutNStepQAgent(QAgent):
    """Acts e-greedily on Q-values, stores its training steps into a T x B block and, once
    the block is full, has its learner take a gradient step on it (then clears it)."""

    accumulates_n_step: ClassVar[bool] = False  # the block computes its own returns

    def make_learner(self) -> Learner:
        return RolloutNStepQLearner(**self.learner_arguments())

    def store(self, step: Transition, info: ActionInfo, rows: np.ndarray | None = None) -> None:
        # The block holds training steps only: heatup's would overfill it before any learning.
        if self.phase is not RunPhase.TRAIN:
            return
        if rows is not None and isinstance(self.memory, Rollout):
            self.memory.reserve(self.num_envs)
        super().store(step, info, rows)

    def end_episodes(self) -> None:
        # The episodes in the block stop here: its last steps bootstrap from their successors.
        if isinstance(self.memory, Rollout) and self.memory.stored:
            self.memory.cut()
        super().end_episodes()

    def train(self) -> int:
        """Learn from the block once it is full, then clear it."""
        learner = self.learner  # none in an agent that only acts
        assert learner is None or isinstance(learner, RolloutNStepQLearner)
        return train_on_full_block(self, learner)

    def state_dict(self, include_memory: bool = False) -> dict[str, Any]:
        # The block in progress is small and part of what the agent learns next: always kept.
        return super().state_dict(include_memory=True)


class RolloutNStepQLearner(QLearner):
    """The update of asynchronous n-step (or one-step) Q-learning on a full block."""

    algorithm: DQNAlgorithmParameters

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not isinstance(self.memory, Rollout):
            raise CoachError(f"{type(self).__name__} learns from a rollout block")
        self.rollout: Rollout = self.memory
        algorithm = self.algorithm
        one_step = (
            isinstance(algorithm, RolloutNStepQAlgorithmParameters)
            and algorithm.targets_horizon == "one_step"
        )
        self.gae_lambda = 0.0 if one_step else 1.0
        """GAE's lambda that gives the targets (`compute_targets`)."""

    def learn_block(self, clock: Clock) -> tuple[int, dict[str, float]]:
        """Targets for the whole block, then Q(s, a) regressed on them: one gradient step
        per ``batch_size`` steps of it; the steps taken and the mean of each loss."""
        self.compute_targets()
        totals: dict[str, float] = {}
        steps = 0
        for batch in self.rollout.minibatches(self.algorithm.batch_size):
            b = self.sampled(batch)
            q, _ = taken_q(self, b)
            for name, value in regress_q(self, b, q, b.extras["returns"]).items():
                totals[name] = totals.get(name, 0.0) + float(value)
            steps += 1
        self.end_round(
            Clock(clock.training_steps + steps, clock.training_env_steps, clock.episodes)
        )
        return steps, {name: total / steps for name, total in totals.items()}

    def compute_targets(self) -> None:
        """Each step's target into the block's returns: GAE's recursion with V(s) =
        max_a Q_target(s, a) (or its double-Q choice) gives, with lambda 1, the rewards to
        the block's end bootstrapped there (and at every truncation, never past a
        termination), and with lambda 0 the one-step target."""
        rollout = self.rollout
        c = rollout.columns
        steps = rollout.steps
        every = np.divmod(np.arange(steps * rollout.num_envs), rollout.num_envs)
        values = self.target_values(c["states"], every).reshape(steps, rollout.num_envs)
        last = self.target_values(c["next_states"], rollout.last_steps())
        final = np.zeros((steps, rollout.num_envs), dtype=np.float64)
        t, b = np.nonzero(c["truncated"][:steps])
        if len(t):
            final[t, b] = self.target_values(c["next_states"], (t, b))
        rollout.compute_advantages(values, last, final, self.algorithm.discount, self.gae_lambda)

    @torch.no_grad()
    def target_values(
        self, states: dict[str, np.ndarray], cells: tuple[np.ndarray, np.ndarray]
    ) -> np.ndarray:
        """``max_a Q_target(s, a)`` (double Q: the target's value of the online argmax) of
        the block's ``states`` at ``cells``, float64."""
        t, b = cells
        inputs = self.tensors({key: value[t, b] for key, value in states.items()})
        bootstrap = double_q_target_values if self.algorithm.double_q else greedy_target_values
        values: np.ndarray = bootstrap(self.q_network, self.action_values, inputs).cpu().numpy()
        return values.astype(np.float64)
