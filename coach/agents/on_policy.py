"""What the on-policy agents share: collect T x B rollout blocks with the current policy,
compute GAE over each full block, learn from it, clear it.

Each algorithm (REINFORCE and A2C, PPO, Clipped PPO) derives from `OnPolicyAgent` directly
and writes its own `learn_from_block`, top to bottom: its schedules, its epochs of
minibatches, its losses, from the shared pieces here (`OnPolicyAgent.evaluate`,
`OnPolicyAgent.descend`, `approx_kl`, `LossTotals`). Discrete actions use a categorical
policy, Box actions a diagonal Gaussian (squashed or clipped into the bounds). The policy
and the value function share a network (``main``, with a ``policy`` and a ``v`` head) or
have their own (``actor`` and ``critic``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from coach import validation as check
from coach.agents.acting import Policy
from coach.agents.agent import Agent, AgentParameters, AlgorithmParameters, validate_rhythm
from coach.agents.learning import on_device
from coach.core.run_phase import RunPhase
from coach.core.types import ActionInfo, Batch, EnvResponse, Observation, Transition
from coach.errors import CoachError
from coach.memories.memory import MemoryParameters
from coach.memories.rollout import Rollout, RolloutParameters
from coach.networks.distributions import CategoricalDistribution, GaussianDistribution
from coach.networks.heads import (
    CategoricalPolicyHeadParameters,
    HeadParameters,
    VHeadParameters,
)
from coach.networks.parameters import MiddlewareParameters, NetworkParameters
from coach.schedules import Schedule
from coach.validation import InvalidParameter


@dataclass(slots=True, kw_only=True)
class OnPolicyAlgorithmParameters(AlgorithmParameters):
    """What every on-policy algorithm here shares."""

    gae_lambda: float = 0.95
    """GAE's lambda (1: Monte Carlo returns)."""
    epochs: int = 1
    """Passes over each rollout block."""
    learning_rate_schedule: Schedule | None = None
    """The learning rate over training env steps (``None`` keeps the networks' own)."""
    value_coefficient: float = 0.5
    """Weight of the value loss."""
    entropy_coefficient: float = 0.0
    """Weight of the entropy bonus."""
    normalize_advantages: bool = True
    """Standardize the advantages of each minibatch."""
    squash_actions: bool = False
    """Box actions: tanh-squash the Gaussian into the bounds (else clip into them)."""

    def validate(self) -> None:
        validate_rhythm(self)
        check.whole("batch_size", self.batch_size, 0, why="0: the whole block at once")
        check.number("gae_lambda", self.gae_lambda, 0, 1)
        check.whole("epochs", self.epochs, 1)
        if self.learning_rate_schedule is not None:
            check.schedule("learning_rate_schedule", self.learning_rate_schedule, 0)
        check.number("value_coefficient", self.value_coefficient, 0)
        check.number("entropy_coefficient", self.entropy_coefficient)


def actor_critic_networks(
    policy_head: HeadParameters,
    learning_rate: float,
    scheme: list[int] | None = None,
    activation: str = "tanh",
    gradient_clip_norm: float | None = 0.5,
) -> dict[str, NetworkParameters]:
    """Separate ``actor`` (the policy head) and ``critic`` (a value head) networks of the same
    shape, as SB3 and RL Zoo build them for on-policy agents."""
    return {
        name: NetworkParameters(
            middleware=MiddlewareParameters(scheme=list(scheme or [64, 64]), activation=activation),
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


Distribution = CategoricalDistribution | GaussianDistribution
"""What an on-policy actor gives for a batch of states."""


@dataclass(slots=True, kw_only=True)
class OnPolicyAgentParameters(AgentParameters):
    """An on-policy agent's parameters."""

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


def approx_kl(log_prob: torch.Tensor, old_log_prob: torch.Tensor) -> float:
    """KL(pi_old || pi) estimated from the logged actions as E[(r - 1) - log r]
    (Schulman's low-variance estimator), r = pi / pi_old."""
    with torch.no_grad():
        log_ratio = log_prob - old_log_prob
        return ((log_ratio.exp() - 1) - log_ratio).mean().item()


def value_error(values: torch.Tensor, returns: torch.Tensor) -> torch.Tensor:
    """The squared error of the values to the returns, averaged."""
    return ((values - returns) ** 2).mean()


class LossTotals:
    """Sums of named losses over a block's gradient steps, for their means."""

    def __init__(self) -> None:
        self.steps = 0
        self.totals: dict[str, float] = {}

    def add(self, **losses: float) -> None:
        """One gradient step's losses."""
        self.steps += 1
        for name, value in losses.items():
            self.totals[name] = self.totals.get(name, 0.0) + value

    def means(self) -> dict[str, float]:
        return {name: total / max(self.steps, 1) for name, total in self.totals.items()}


class StochasticPolicy(Policy):
    """Acts by sampling the actor's distribution (its mode in evaluation), and keeps with
    each step what on-policy learning needs of it: the action's log-probability and the
    critic's value (`ActionInfo.memory_extras`), and for a squashed Gaussian the sample
    before the squash.

    Args:
        distribution: The actor's distribution for a batch of states.
        value: The critic's value for a batch of states, (B,).
        **kwargs: `Policy`'s arguments.
    """

    def __init__(
        self,
        distribution: Callable[[dict[str, torch.Tensor]], Distribution],
        value: Callable[[dict[str, torch.Tensor]], torch.Tensor],
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.distribution = distribution
        self.value = value

    def decide(self, state: Observation, phase: RunPhase) -> ActionInfo:
        with torch.no_grad():
            tensors = self.tensors(state)
            dist = self.distribution(tensors)
            if phase is RunPhase.EVALUATE:
                return ActionInfo(action=dist.mode().cpu().numpy())
            stored: dict[str, np.ndarray] = {}
            if isinstance(dist, GaussianDistribution):
                action, raw = dist.sample(self.torch_generator)
                log_prob = dist.log_prob(raw)
                stored["raw_action"] = raw.cpu().numpy()
            else:
                action = dist.sample(self.torch_generator)
                log_prob = dist.log_prob(action)
            value = self.value(tensors)
        stored["log_prob"] = log_prob.cpu().numpy().astype(np.float32)
        stored["value"] = value.cpu().numpy().astype(np.float32)
        info = ActionInfo(
            action=action.cpu().numpy(), log_prob=stored["log_prob"], memory_extras=stored
        )
        if self.log_behaviour and isinstance(dist, CategoricalDistribution):  # being recorded
            info.extras["action_probabilities"] = dist.log_probs.exp().cpu().numpy()
        return info


class OnPolicyAgent(Agent):
    """Collects rollout blocks with its own policy and learns from each block once full."""

    params: OnPolicyAgentParameters

    def __init__(self, params: OnPolicyAgentParameters, *args: Any, **kwargs: Any) -> None:
        super().__init__(params, *args, **kwargs)
        nets = self.networks
        if "main" in nets:
            self.actor = self.critic = nets["main"]
        elif {"actor", "critic"} <= set(nets):
            self.actor, self.critic = nets["actor"], nets["critic"]
        else:
            raise CoachError(
                f"{type(self).__name__} needs a 'main' network, or 'actor' and 'critic'"
            )
        if not isinstance(self.memory, Rollout):
            raise CoachError(
                f"{type(self).__name__} learns from a rollout block (RolloutParameters)"
            )
        self.rollout: Rollout = self.memory
        self.continuous = isinstance(self.action_space, spaces.Box)
        if isinstance(self.action_space, spaces.Box):
            space = self.action_space
            self.low = torch.as_tensor(space.low, dtype=torch.float32, device=self.device)
            self.high = torch.as_tensor(space.high, dtype=torch.float32, device=self.device)

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
        out = self.actor(states)["policy"]
        if not self.continuous:
            return CategoricalDistribution(out)
        squash = self.params.algorithm.squash_actions
        return GaussianDistribution(out[:, 0], out[:, 1], self.low, self.high, squash=squash)

    def values(self, states: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.critic(states)["v"]

    def make_policy(self) -> Policy:
        return StochasticPolicy(self.distribution, self.values, **self.policy_arguments())

    # -- collecting -------------------------------------------------------------------------

    def store(self, step: Transition, info: ActionInfo) -> None:
        # Only the current policy's own steps are on-policy data (not heatup's random ones).
        if self.phase is not RunPhase.TRAIN:
            return
        assert self.memory is not None  # the rollout, or a rollout worker's outbox
        self.memory.store(step)

    def reset(self, response: EnvResponse) -> None:
        # The episodes in the block stop here: mark the block's last step as truncated, so
        # GAE bootstraps from its successor and does not run on into the new episodes.
        if self.memory is self.rollout and self.rollout.steps > 0:
            self.rollout.columns["truncated"][self.rollout.steps - 1] = True
        super().reset(response)

    # -- learning ---------------------------------------------------------------------------

    def train(self) -> int:
        """Learn from the block once it is full (`learn_from_block`), then clear it."""
        if self.phase is not RunPhase.TRAIN or not self.rollout.full:
            return 0
        steps, losses = self.learn_from_block()
        self.rollout.clear()
        self.training_rounds += 1
        self.training_steps += steps
        for name, value in losses.items():
            self.log.scalar(f"Loss/{name}", value)
        return steps

    def learn_from_block(self) -> tuple[int, dict[str, float]]:
        """Learn from the full rollout block; returns the gradient steps taken and the mean
        of each named loss."""
        raise NotImplementedError(f"{type(self).__name__} does not learn from its blocks")

    def follow_learning_rate(self) -> None:
        """Set the networks' learning rate from ``learning_rate_schedule``, if there is one."""
        schedule = self.params.algorithm.learning_rate_schedule
        if schedule is not None:
            rate = schedule.value(self.training_env_steps)
            for net in {id(self.actor): self.actor, id(self.critic): self.critic}.values():
                for group in net.optimizer.param_groups:
                    group["lr"] = rate

    def compute_advantages(self) -> None:
        """GAE over the full block, bootstrapped from the values after its last step and
        after every truncation in it (`Rollout.compute_advantages`)."""
        algorithm = self.params.algorithm
        c = self.rollout.columns
        with torch.no_grad():
            # The states after the block's last step (where an episode ended there, the
            # value is not used): the block's own, wherever it was collected.
            after = self.tensors({k: v[-1] for k, v in c["next_states"].items()})
            last = self.values(after).cpu().numpy()
            final = np.zeros_like(c["rewards"], dtype=np.float64)
            truncated = np.flatnonzero(c["truncated"].reshape(-1))
            if len(truncated):
                t, b = np.divmod(truncated, self.rollout.num_envs)
                nxt = self.tensors({k: v[t, b] for k, v in c["next_states"].items()})
                final[t, b] = self.values(nxt).cpu().numpy()
        self.rollout.compute_advantages(
            c["extras"]["value"].astype(np.float64), last.astype(np.float64), final,
            algorithm.discount, algorithm.gae_lambda,
        )  # fmt: skip

    def minibatches(self) -> Iterator[Batch]:
        """The block's rows in shuffled minibatches of ``batch_size`` (0: the whole block),
        as tensors on the agent's device."""
        size = self.params.algorithm.batch_size or len(self.rollout)
        for batch in self.rollout.minibatches(size):
            yield on_device(batch, self.device)

    def evaluate(self, b: Batch) -> tuple[Distribution, torch.Tensor, torch.Tensor]:
        """For a minibatch: the current policy's distribution, the log-probability of the
        actions taken (of the pre-squash sample, for a Gaussian) and the advantages
        (standardized when ``normalize_advantages``)."""
        dist = self.distribution(b.states)
        log_prob = dist.log_prob(b.extras["raw_action"] if self.continuous else b.actions)
        advantages = b.extras["advantages"]
        if self.params.algorithm.normalize_advantages and len(advantages) > 1:
            advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        return dist, log_prob, advantages

    def descend(
        self, policy_loss: torch.Tensor, value_loss: torch.Tensor, entropy: torch.Tensor
    ) -> None:
        """One gradient step on ``policy + c_v value - c_e entropy``: on the shared network,
        or the policy's part on the actor and the value's on the critic."""
        algorithm = self.params.algorithm
        if self.actor is self.critic:
            self.actor.train_step(
                policy_loss
                + algorithm.value_coefficient * value_loss
                - algorithm.entropy_coefficient * entropy
            )
        else:
            self.actor.train_step(policy_loss - algorithm.entropy_coefficient * entropy)
            self.critic.train_step(algorithm.value_coefficient * value_loss)

    def state_dict(self, include_memory: bool = False) -> dict[str, Any]:
        # The block in progress is small and part of the policy's data: always kept.
        return super().state_dict(include_memory=True)
