"""Hierarchical Actor-Critic (Levy, Konidaris, Platt and Saenko, "Learning Multi-Level
Hierarchies with Hindsight", ICLR 2019), on DDPG.

Each level is a DDPG agent conditioned on its goal: built from the off-policy actor-critics'
bases (`coach.agents.critics`), it learns by DDPG's update (`coach.agents.ddpg.ddpg_update`).
The levels above the bottom act in the goal space, their actions subgoals for the level
below (`coach.graph_managers.hrl`). Three kinds of transitions make the levels learn
together though the ones below are still poor:

- hindsight action transitions: a level stores the subgoal the level below actually
  reached as its action, not the one it proposed, as if the level below were optimal
  (`HierarchicalHindsightExperienceReplay`, the memory of every level but the bottom);
- hindsight goal transitions: hindsight experience replay over the level's own episode
  (that memory, and `EpisodicHindsightExperienceReplay` at the bottom);
- subgoal testing: with probability ``subgoal_testing_rate`` a level tests its subgoal: the
  levels below act without exploration, and if the subgoal is missed the level also stores
  the proposed subgoal with ``subgoal_penalty`` and no bootstrap (minus its horizon), which
  teaches it to propose subgoals the levels below can reach.

Targets are clipped to ``[-horizon, 0]``, the range of the goal rewards' returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from coach import validation as check
from coach.agents.acting import DeterministicPolicy, Policy
from coach.agents.critics import (
    ActorCriticAlgorithmParameters,
    ActorCriticLearner,
    ContinuousActorCritic,
    ContinuousActorCriticAgentParameters,
)
from coach.agents.ddpg import ddpg_update, target_actor_values
from coach.agents.learning import Learner, on_device
from coach.core.goals import GoalReward
from coach.core.run_phase import RunPhase
from coach.core.types import ActionInfo, Batch, Observation, Transition
from coach.errors import CoachError
from coach.memories.hierarchical_hindsight import HierarchicalHindsightExperienceReplayParameters
from coach.memories.hindsight import EpisodicHindsightExperienceReplayParameters
from coach.memories.memory import MemoryParameters, TakesSubgoalPenalties
from coach.networks.network_wrapper import NetworkWrapper


@dataclass(slots=True, kw_only=True)
class HACAlgorithmParameters(ActorCriticAlgorithmParameters):
    """HAC's algorithm parameters (the paper's): the off-policy actor-critics' (a level
    learns by DDPG's update), and the hierarchy's."""

    subgoal_testing_rate: float = 0.3
    """The chance that a level tests the subgoal it proposes."""
    goal_reward: GoalReward = field(default_factory=GoalReward)
    """When the level below reached a subgoal (the hierarchy's `LevelGoals.goal_reward`)."""
    achieved_goal_key: str = "achieved_goal"
    """The observation key of the goal a state achieves."""
    desired_goal_key: str = "desired_goal"
    """The observation key of the level's own goal (the environment's, at the top)."""

    def validate(self) -> None:
        ActorCriticAlgorithmParameters.validate(self)
        check.number("subgoal_testing_rate", self.subgoal_testing_rate, 0, 1)
        check.name("achieved_goal_key", self.achieved_goal_key)
        check.name("desired_goal_key", self.desired_goal_key)


@dataclass(slots=True, kw_only=True)
class HACAgentParameters(ContinuousActorCriticAgentParameters):
    """A HAC level: the off-policy actor-critics' defaults (DDPG's exploration and networks)
    with hindsight replay of its episodes ("future", 4 copies)."""

    algorithm: HACAlgorithmParameters = field(default_factory=HACAlgorithmParameters)
    """The algorithm's parameters."""
    memory: MemoryParameters | None = field(
        default_factory=EpisodicHindsightExperienceReplayParameters
    )
    """Hindsight replay of the level's episodes: the bottom level's default; a level that
    sets subgoals takes `HierarchicalHindsightExperienceReplayParameters`."""

    def agent_class(self) -> type[HACAgent]:
        return HACAgent


class SubgoalTestingPolicy(DeterministicPolicy):
    """A deterministic actor's acting (DDPG's), and in training a subgoal test now and then
    (Levy et al., 2019): the level below then acts without exploration, so a subgoal it
    misses is one the policy could not reach, and this level stores the miss's penalty.

    Args:
        actor: The actor network.
        testing_rate: The chance that an action's subgoal is tested.
        **kwargs: `Policy`'s arguments.
    """

    def __init__(self, actor: NetworkWrapper, testing_rate: float, **kwargs: Any) -> None:
        super().__init__(actor, **kwargs)
        self.testing_rate = testing_rate
        self.sets_goals = False
        """Whether the level's actions are subgoals (`HACAgent.join_hierarchy`)."""

    def decide(self, state: Observation, phase: RunPhase) -> ActionInfo:
        info = super().decide(state, phase)
        testing = (
            self.sets_goals
            and phase is RunPhase.TRAIN
            and self.explore
            and bool(self.rng.random() < self.testing_rate)
        )
        if testing:
            info.extras["subgoal_test"] = np.ones(self.num_envs, dtype=bool)
        return info


class HACAgent(ContinuousActorCritic):
    """One level of a HAC hierarchy: a deterministic actor and a critic, acting with subgoal
    tests (`SubgoalTestingPolicy`), storing hindsight and penalty transitions, learning by
    DDPG's update (`HACLearner`)."""

    params: HACAgentParameters

    def __init__(self, params: HACAgentParameters, *args: Any, **kwargs: Any) -> None:
        super().__init__(params, *args, **kwargs)
        self.sets_goals = False
        """Whether the level's actions are subgoals for a level below (`join_hierarchy`)."""
        self.subgoal_penalty = -1.0
        self.penalized: TakesSubgoalPenalties | None = None
        """The reward of a missed subgoal test: minus the level's horizon."""

    def join_hierarchy(
        self, sets_goals: bool, horizon: int | None, horizon_below: int | None
    ) -> None:
        """Called by the graph: whether this level sets subgoals, its own horizon (actions per
        goal; ``None`` at the top) and that of the level below."""
        hierarchical = isinstance(
            self.params.memory, HierarchicalHindsightExperienceReplayParameters
        )
        if sets_goals and not hierarchical:
            raise CoachError(
                f"HAC level {self.name!r} sets subgoals, so its memory must be "
                f"HierarchicalHindsightExperienceReplayParameters (hindsight actions and "
                f"subgoal penalties), got {type(self.params.memory).__name__}"
            )
        if not sets_goals and hierarchical:
            raise CoachError(
                f"HAC level {self.name!r} is the bottom level: its actions are not subgoals, so "
                f"its memory is EpisodicHindsightExperienceReplayParameters, not "
                f"HierarchicalHindsightExperienceReplayParameters"
            )
        self.sets_goals = sets_goals
        memory = self.memory
        self.penalized = memory if isinstance(memory, TakesSubgoalPenalties) else None
        """The memory that takes subgoal penalties (checked once, not on every store)."""
        assert isinstance(self.policy, SubgoalTestingPolicy)
        self.policy.sets_goals = sets_goals
        if isinstance(self.learner, HACLearner):
            self.learner.value_floor = -float(horizon) if horizon else None
        self.subgoal_penalty = -float(horizon or horizon_below or 1)

    # -- acting -----------------------------------------------------------------------------

    def make_policy(self) -> Policy:
        rate = self.params.algorithm.subgoal_testing_rate
        return SubgoalTestingPolicy(self.networks["actor"], rate, **self.policy_arguments())

    # -- storing ----------------------------------------------------------------------------

    def store(self, step: Transition, info: ActionInfo, rows: np.ndarray | None = None) -> None:
        if not self.sets_goals or self.memory is None:
            super().store(step, info, rows)
            return
        algorithm = self.params.algorithm
        proposed = step.action
        reached = np.asarray(step.next_state[algorithm.achieved_goal_key])
        # Every level is rewarded for its own goal per action (at the top the environment's
        # goal), not by the sum of the environment's rewards over the steps below.
        step.reward = algorithm.goal_reward.reward(
            reached, step.next_state[algorithm.desired_goal_key]
        )
        penalized = self.penalized
        assert penalized is not None, "a level that sets goals has a hierarchical memory"
        # The memory stores the subgoal reached as the action (hindsight action transition).
        self.memory.store(step)
        if "subgoal_test" in info.extras:
            missed = ~algorithm.goal_reward.reached(reached.reshape(proposed.shape), proposed)
            rows = np.flatnonzero(missed)
            if len(rows):
                penalized.store_subgoal_penalty(
                    {k: v[rows] for k, v in step.state.items()},
                    proposed[rows],
                    self.subgoal_penalty,
                    {k: v[rows] for k, v in step.next_state.items()},
                )

    # -- learning ---------------------------------------------------------------------------

    def make_learner(self) -> Learner:
        return HACLearner(**self.learner_arguments())


class HACLearner(ActorCriticLearner):
    """A HAC level's update: DDPG's (`coach.agents.ddpg.ddpg_update`), with target values
    clipped to the range of returns of the level's goal rewards.

    Args:
        **kwargs: `ActorCriticLearner`'s arguments.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.value_floor: float | None = None
        """The lowest return of the level's goal rewards (minus its horizon), if bounded
        (`HACAgent.join_hierarchy`)."""

    def bootstrap_values(self, next_states: dict[str, torch.Tensor]) -> torch.Tensor:
        """DDPG's ``Q'(s', mu'(s'))``, clipped to the goal rewards' range of returns,
        ``[-horizon, 0]``."""
        values = target_actor_values(self.actor, self.critics, next_states)
        if self.value_floor is None:
            return values
        return values.clamp(self.value_floor, 0.0)

    def learn(self, batch: Batch) -> dict[str, float | torch.Tensor]:
        return ddpg_update(self, on_device(batch, self.device))
