"""What the on-policy agents share: collect T x B rollout blocks with the current policy,
compute GAE over each full block, learn from it, clear it.

This module is the acting and collecting side (`StochasticPolicy`, `OnPolicyAgent`) and the
agents' parameters; the learning side is `coach.agents.on_policy_learning`. Each algorithm
(REINFORCE and A2C, PPO, Clipped PPO) has a learner that derives from `OnPolicyLearner`
directly and writes its own `learn_block`, top to bottom; its agent derives from
`OnPolicyAgent` and makes that learner. Discrete actions use a categorical
policy, Box actions a diagonal Gaussian (squashed or clipped into the bounds). Where the
observations carry an action mask (`coach.core.action_masks`), the logits of the illegal
actions are `MASKED_FILL`, in acting and in learning alike (the stored states keep the mask):
the log-probabilities and the entropy are those of the masked distribution. The policy
and the value function share a network (``main``, with a ``policy`` and a ``v`` head) or
have their own (``actor`` and ``critic``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import torch
from gymnasium import spaces

from coach.agents.acting import Policy, action_bounds
from coach.agents.agent import Agent
from coach.agents.learning import train_on_full_block
from coach.agents.on_policy_learning import (
    Distribution,
    OnPolicyAlgorithmParameters,
    OnPolicyLearner,
    actor_and_critic,
)
from coach.agents.parameters import AgentParameters
from coach.core.action_masks import ACTION_MASK, MASKED_FILL, masked_values
from coach.core.run_phase import RunPhase
from coach.core.types import ActionInfo, Observation, Transition
from coach.errors import CoachError
from coach.memories.memory import MemoryParameters
from coach.memories.rollout import Rollout, RolloutParameters
from coach.networks.distributions import CategoricalDistribution, GaussianDistribution
from coach.networks.heads import (
    CategoricalPolicyHeadParameters,
    HeadParameters,
    VHeadParameters,
)
from coach.networks.network_wrapper import NetworkWrapper
from coach.networks.parameters import (
    MiddlewareParameters,
    NetworkParameters,
    RecurrentParameters,
)
from coach.validation import InvalidParameter


def actor_critic_networks(
    policy_head: HeadParameters,
    learning_rate: float,
    scheme: list[int] | None = None,
    activation: str = "tanh",
    gradient_clip_norm: float | None = 0.5,
    recurrent: RecurrentParameters | None = None,
) -> dict[str, NetworkParameters]:
    """Separate ``actor`` (the policy head) and ``critic`` (a value head) networks of the same
    shape, as SB3 and RL Zoo build them for on-policy agents; with ``recurrent``, each has
    its own recurrent layer before the MLP (sb3-contrib's ``enable_critic_lstm``)."""
    return {
        name: NetworkParameters(
            middleware=MiddlewareParameters(
                scheme=list(scheme or [64, 64]),
                activation=activation,
                recurrent=copy.deepcopy(recurrent),
            ),
            heads=[head],
            learning_rate=learning_rate,
            gradient_clip_norm=gradient_clip_norm,
        )
        for name, head in (("actor", policy_head), ("critic", VHeadParameters()))
    }


def default_networks() -> dict[str, NetworkParameters]:
    """One network with a categorical policy head and a value head."""
    return {
        "main": NetworkParameters(
            middleware=MiddlewareParameters(scheme=[64, 64], activation="tanh"),
            heads=[CategoricalPolicyHeadParameters(), VHeadParameters()],
            learning_rate=3e-4,
            gradient_clip_norm=0.5,
        )
    }


"""What an on-policy actor gives for a batch of states."""


@dataclass(slots=True, kw_only=True)
class OnPolicyAgentParameters(AgentParameters):
    """An on-policy agent's parameters: the base of each on-policy algorithm's."""

    abstract: ClassVar[bool] = True

    algorithm: OnPolicyAlgorithmParameters = field(default_factory=OnPolicyAlgorithmParameters)
    """The algorithm's parameters (``batch_size`` is the minibatch size)."""
    memory: MemoryParameters | None = field(default_factory=RolloutParameters)
    """The rollout block (``rollout_length`` steps per env copy)."""
    network_wrappers: dict[str, NetworkParameters] = field(default_factory=default_networks)
    """``main`` with policy and ``v`` heads, or ``actor`` (policy) and ``critic`` (``v``)."""

    def validate(self) -> None:
        if not isinstance(self.memory, RolloutParameters):
            raise InvalidParameter(
                "memory",
                "must be RolloutParameters (the agent learns from rollout blocks)",
                self.memory,
            )
        AgentParameters.validate(self)
        if any(p.recurrent for p in self.network_wrappers.values()):
            length = self.algorithm.sequence_length or self.memory.rollout_length
            if self.memory.rollout_length % length:
                raise InvalidParameter(
                    "algorithm.sequence_length",
                    f"must divide memory.rollout_length ({self.memory.rollout_length}): a "
                    f"recurrent network learns from each block column cut into sequences",
                    self.algorithm.sequence_length,
                )
            if self.algorithm.batch_size % length:
                raise InvalidParameter(
                    "algorithm.batch_size",
                    f"must be a multiple of the sequence length ({length} steps): a recurrent "
                    f"network learns from minibatches of whole sequences",
                    self.algorithm.batch_size,
                )

    def validate_for_environment(self, num_envs: int) -> None:
        # A minibatch is drawn from one T x B block: it cannot be larger than the block (B:
        # every env copy whose steps fill it, rollout workers' included).
        if not isinstance(self.memory, RolloutParameters):
            return  # refused by validate
        block = self.memory.rollout_length * num_envs
        if self.algorithm.batch_size > block:
            raise InvalidParameter(
                "algorithm.batch_size",
                f"must be at most the rollout block (memory.rollout_length "
                f"{self.memory.rollout_length} x env copies {num_envs} = {block})",
                self.algorithm.batch_size,
            )


class StochasticPolicy(Policy):
    """Acts by sampling the actor's distribution (in evaluation, its mode unless told
    otherwise), and keeps with
    each step what on-policy learning needs of it: the action's log-probability and the
    critic's value (`ActionInfo.memory_extras`), and for a squashed Gaussian the sample
    before the squash.

    Args:
        actor: The network with the ``policy`` head.
        critic: The network with the ``v`` head (the actor itself when they share one).
        distribution: The actor's distribution from its ``policy`` head's output and the
            states' action mask (None without one).
        deterministic_evaluation: Evaluate with the distribution's mode (else sample it).
        **kwargs: `Policy`'s arguments.
    """

    def __init__(
        self,
        actor: NetworkWrapper,
        critic: NetworkWrapper,
        distribution: Callable[[torch.Tensor, torch.Tensor | None], Distribution],
        deterministic_evaluation: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.actor = actor
        self.critic = critic
        self.distribution = distribution
        self.deterministic_evaluation = deterministic_evaluation

    def decide(self, state: Observation, phase: RunPhase) -> ActionInfo:
        with torch.no_grad():
            tensors = self.tensors(state)
            actor = self.outputs(self.actor, tensors)
            critic = actor
            if self.critic is not self.actor and (phase is not RunPhase.EVALUATE or self.hidden):
                critic = self.outputs(self.critic, tensors)  # a recurrent one steps always
            dist = self.distribution(
                actor["policy"], tensors[ACTION_MASK] if self.action_mask else None
            )
            if phase is RunPhase.EVALUATE:  # nothing kept: no log-probability, no value
                if self.deterministic_evaluation:
                    return ActionInfo(action=dist.mode().cpu().numpy())
                if isinstance(dist, GaussianDistribution):
                    sampled, _ = dist.sample(self.torch_generator)  # not the pre-squash draw
                else:
                    sampled = dist.sample(self.torch_generator)
                return ActionInfo(action=sampled.cpu().numpy())
            stored: dict[str, np.ndarray] = {}
            if isinstance(dist, GaussianDistribution):
                action, raw = dist.sample(self.torch_generator)
                log_prob = dist.log_prob(raw)
                stored["raw_action"] = raw.cpu().numpy()
            else:
                action = dist.sample(self.torch_generator)
                log_prob = dist.log_prob(action)
            value = critic["v"]
        stored["log_prob"] = log_prob.cpu().numpy().astype(np.float32)
        stored["value"] = value.cpu().numpy().astype(np.float32)
        info = ActionInfo(
            action=action.cpu().numpy(), log_prob=stored["log_prob"], memory_extras=stored
        )
        if self.log_behaviour and isinstance(dist, CategoricalDistribution):  # being recorded
            info.extras["action_probabilities"] = dist.log_probs.exp().cpu().numpy()
        return info

    def greedy(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        mask = inputs[ACTION_MASK] if self.action_mask else None
        return self.distribution(self.actor(inputs)["policy"], mask).mode()


class OnPolicyAgent(Agent):
    """Collects rollout blocks with its own policy and, once a block is full, has its
    learner learn from it (`OnPolicyLearner.learn_block`)."""

    params: OnPolicyAgentParameters
    recurrent = True

    def __init__(self, params: OnPolicyAgentParameters, *args: Any, **kwargs: Any) -> None:
        nets = params.network_wrappers
        if not ("main" in nets or {"actor", "critic"} <= set(nets)):
            raise CoachError(
                f"{type(self).__name__} needs a 'main' network, or 'actor' and 'critic'"
            )
        if not isinstance(params.memory, RolloutParameters):
            raise CoachError(
                f"{type(self).__name__} learns from a rollout block (RolloutParameters)"
            )
        super().__init__(params, *args, **kwargs)
        self.actor, self.critic = actor_and_critic(self.networks)
        self.continuous = isinstance(self.action_space, spaces.Box)
        if self.continuous:
            self.low, self.high = action_bounds(self.action_space, self.device, type(self).__name__)

    @property
    def rollout(self) -> Rollout:
        """The block being collected: the agent's memory (in a learning agent)."""
        assert isinstance(self.memory, Rollout), "an acting-only agent stores elsewhere"
        return self.memory

    def memory_extras(self) -> dict[str, spaces.Space]:
        extras: dict[str, spaces.Space] = {
            "value": spaces.Box(-np.inf, np.inf, shape=(), dtype=np.float32),
            "log_prob": spaces.Box(-np.inf, np.inf, shape=(), dtype=np.float32),
        }
        if isinstance(self.action_space, spaces.Box):  # the pre-squash sample
            extras["raw_action"] = spaces.Box(-np.inf, np.inf, self.action_space.shape, np.float32)
        return extras

    # -- the policy -------------------------------------------------------------------------

    def distribution(self, states: dict[str, torch.Tensor]) -> Distribution:
        """The (feed-forward) actor's distribution for a batch of states (masked, where
        they carry an action mask)."""
        return self.distribution_of(self.actor(states)["policy"], states.get(ACTION_MASK))

    def distribution_of(self, out: torch.Tensor, mask: torch.Tensor | None = None) -> Distribution:
        """The distribution the actor's ``policy`` head output describes; a categorical one
        over the actions ``mask`` leaves legal, when given."""
        if not self.continuous:
            return CategoricalDistribution(
                out if mask is None else masked_values(out, mask, MASKED_FILL)
            )
        squash = self.params.algorithm.squash_actions
        return GaussianDistribution(out[:, 0], out[:, 1], self.low, self.high, squash=squash)

    def values(self, states: dict[str, torch.Tensor]) -> torch.Tensor:
        """The (feed-forward) critic's values for a batch of states, (B,)."""
        return self.critic(states)["v"]

    def make_policy(self) -> Policy:
        actor, critic = actor_and_critic(self.networks)  # before __init__ names them
        return StochasticPolicy(
            actor,
            critic,
            self.distribution_of,
            self.params.algorithm.deterministic_evaluation,
            **self.policy_arguments(),
        )

    def learner_arguments(self) -> dict[str, Any]:
        """`Agent.learner_arguments` and the family's: the algorithm, the policy's
        distribution and the critic's values."""
        return {
            **super().learner_arguments(),
            "algorithm": self.params.algorithm,
            "distribution": self.distribution,
            "values": self.values,
            "distribution_of": self.distribution_of,
        }

    # -- collecting -------------------------------------------------------------------------

    def store(self, step: Transition, info: ActionInfo, rows: np.ndarray | None = None) -> None:
        # Only the current policy's own steps are on-policy data (not heatup's random ones).
        if self.phase is not RunPhase.TRAIN:
            return
        if rows is not None and isinstance(self.memory, Rollout):
            self.memory.reserve(self.num_envs)  # a block of all its slots, seen or not yet
        super().store(step, info, rows)

    def end_episodes(self) -> None:
        # The episodes in the block stop here: mark the block's last step as truncated, so
        # GAE bootstraps from its successor and does not run on into the new episodes.
        if isinstance(self.memory, Rollout) and self.memory.stored:
            self.memory.cut()
        super().end_episodes()

    # -- learning ---------------------------------------------------------------------------

    def train(self) -> int:
        """Learn from the block once it is full (`OnPolicyLearner.learn_block`), then clear
        it."""
        learner = self.learner  # none in an agent that only acts
        assert learner is None or isinstance(learner, OnPolicyLearner)
        return train_on_full_block(self, learner)

    def state_dict(self, include_memory: bool = False) -> dict[str, Any]:
        # The block in progress is small and part of the policy's data: always kept.
        return super().state_dict(include_memory=True)
