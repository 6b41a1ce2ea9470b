"""The on-policy base: collect T x B rollout blocks with the current policy, compute GAE
over each full block, learn from it in epochs of minibatches, clear it.

Subclasses write `policy_loss` (REINFORCE, A2C, PPO). Discrete actions use a categorical
policy, Box actions a diagonal Gaussian (squashed or clipped into the bounds). The policy
and the value function share a network (``main``, with a ``policy`` and a ``v`` head) or
have their own (``actor`` and ``critic``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from coach import validation as check
from coach.agents.agent import Agent, AgentParameters, AlgorithmParameters, validate_rhythm
from coach.core.run_phase import RunPhase
from coach.core.types import ActionInfo, Batch, EnvResponse, Observation
from coach.errors import CoachError
from coach.memories.rollout import Rollout, RolloutParameters
from coach.networks.distributions import CategoricalPolicy, GaussianPolicy
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


@dataclass(slots=True, kw_only=True)
class OnPolicyAgentParameters(AgentParameters):
    """An on-policy agent's parameters."""

    algorithm: OnPolicyAlgorithmParameters = field(default_factory=OnPolicyAlgorithmParameters)
    """The algorithm's parameters (``batch_size`` is the minibatch size)."""
    memory: Any = field(default_factory=RolloutParameters)
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
            self.low = torch.as_tensor(self.action_space.low, dtype=torch.float32)
            self.high = torch.as_tensor(self.action_space.high, dtype=torch.float32)
        self._last: dict[str, np.ndarray] = {}

    def memory_extras(self) -> dict[str, spaces.Space]:
        extras: dict[str, spaces.Space] = {
            "value": spaces.Box(-np.inf, np.inf, shape=(), dtype=np.float32),
            "log_prob": spaces.Box(-np.inf, np.inf, shape=(), dtype=np.float32),
        }
        if isinstance(self.action_space, spaces.Box):  # the pre-squash sample
            extras["raw_action"] = spaces.Box(-np.inf, np.inf, self.action_space.shape, np.float32)
        return extras

    # -- the policy -------------------------------------------------------------------------

    def distribution(self, states: dict[str, torch.Tensor]) -> CategoricalPolicy | GaussianPolicy:
        out = self.actor(states)["policy"]
        if not self.continuous:
            return CategoricalPolicy(out)
        squash = self.params.algorithm.squash_actions
        return GaussianPolicy(out[:, 0], out[:, 1], self.low, self.high, squash=squash)

    def values(self, states: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.critic(states)["v"]

    def choose_action(self, state: Observation) -> ActionInfo:
        with torch.no_grad():
            tensors = self.tensors(state)
            dist = self.distribution(tensors)
            if self.phase is RunPhase.EVALUATE:
                return ActionInfo(action=dist.mode().cpu().numpy())
            if isinstance(dist, GaussianPolicy):
                action, raw = dist.sample(self.torch_generator)
                log_prob = dist.log_prob(raw)
                self._last = {"raw_action": raw.cpu().numpy()}
            else:
                action = dist.sample(self.torch_generator)
                log_prob = dist.log_prob(action)
                self._last = {}
            value = self.values(tensors)
        self._last["log_prob"] = log_prob.cpu().numpy().astype(np.float32)
        self._last["value"] = value.cpu().numpy().astype(np.float32)
        info = ActionInfo(action=action.cpu().numpy(), log_prob=self._last["log_prob"])
        if self.log_behaviour and isinstance(dist, CategoricalPolicy):  # a dataset records it
            info.extras["action_probabilities"] = dist.log_probs.exp().cpu().numpy()
        return info

    # -- collecting -------------------------------------------------------------------------

    def store(self, next_state: Observation, reward: np.ndarray, response: EnvResponse) -> None:
        # Only the current policy's own steps are on-policy data (not heatup's random ones).
        if self.phase is not RunPhase.TRAIN:
            return
        assert self.last_action is not None
        assert self.memory is not None  # the rollout, or a rollout worker's outbox
        self.memory.store(
            self.state, self.last_action, reward, next_state, response.terminated,
            response.truncated, extras=self._last,
        )  # fmt: skip

    def reset(self, response: EnvResponse) -> None:
        # The episodes in the block stop here: mark the block's last step as truncated, so
        # GAE bootstraps from its successor and does not run on into the new episodes.
        if self.memory is self.rollout and self.rollout.steps > 0:
            self.rollout.columns["truncated"][self.rollout.steps - 1] = True
        super().reset(response)

    # -- learning ---------------------------------------------------------------------------

    def before_learning(self) -> None:
        """Called once per full block, before its epochs (schedules and the like)."""
        schedule = self.params.algorithm.learning_rate_schedule
        if schedule is not None:
            rate = schedule.value(self.training_env_steps)
            for net in {id(self.actor): self.actor, id(self.critic): self.critic}.values():
                for group in net.optimizer.param_groups:
                    group["lr"] = rate

    def stop_epochs(self, losses: dict[str, float]) -> bool:
        """Whether to end the block's epochs early after a minibatch (never, by default)."""
        return False

    def _advantages(self) -> None:
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
                nxt = {k: torch.as_tensor(v[t, b]) for k, v in c["next_states"].items()}
                final[t, b] = self.values(nxt).cpu().numpy()
        self.rollout.compute_advantages(
            c["extras"]["value"].astype(np.float64), last.astype(np.float64), final,
            algorithm.discount, algorithm.gae_lambda,
        )  # fmt: skip

    def train(self) -> int:
        if self.phase is not RunPhase.TRAIN or not self.rollout.full:
            return 0
        algorithm = self.params.algorithm
        self.before_learning()
        self._advantages()
        steps = 0
        totals: dict[str, float] = {}
        for _ in range(algorithm.epochs):
            stop = False
            for batch in self.rollout.minibatches(algorithm.batch_size or len(self.rollout)):
                losses = self.learn_from_batch(batch)
                for name, value in losses.items():
                    totals[name] = totals.get(name, 0.0) + value
                steps += 1
                if self.stop_epochs(losses):
                    stop = True
                    break
            if stop:
                break
        self.rollout.clear()
        self.training_rounds += 1
        self.training_steps += steps
        for name, total in totals.items():
            self.log.scalar(f"Loss/{name}", total / max(steps, 1))
        return steps

    def policy_loss(
        self, log_prob: torch.Tensor, batch: Batch, advantages: torch.Tensor
    ) -> torch.Tensor:
        """The policy's loss on a minibatch."""
        raise NotImplementedError

    def value_loss(self, values: torch.Tensor, batch: Batch) -> torch.Tensor:
        return ((values - batch.extras["returns"]) ** 2).mean()

    def learn_from_batch(self, batch: Batch) -> dict[str, float]:
        algorithm = self.params.algorithm
        b = batch.map(lambda a: torch.as_tensor(a, device=self.device))
        dist = self.distribution(b.states)
        log_prob = dist.log_prob(b.extras["raw_action"] if self.continuous else b.actions)
        advantages = b.extras["advantages"]
        if algorithm.normalize_advantages and len(advantages) > 1:
            advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        policy_loss = self.policy_loss(log_prob, b, advantages)
        value_loss = self.value_loss(self.values(b.states), b)
        entropy = dist.entropy().mean()
        if self.actor is self.critic:
            self.actor.train_step(
                policy_loss
                + algorithm.value_coefficient * value_loss
                - algorithm.entropy_coefficient * entropy
            )
        else:
            self.actor.train_step(policy_loss - algorithm.entropy_coefficient * entropy)
            self.critic.train_step(algorithm.value_coefficient * value_loss)
        with torch.no_grad():
            log_ratio = log_prob - b.extras["log_prob"]
            approx_kl = ((log_ratio.exp() - 1) - log_ratio).mean().item()
        return {
            "policy_loss": policy_loss.item(),
            "value_loss": value_loss.item(),
            "entropy": entropy.item(),
            "approx_kl": approx_kl,
        }

    def state_dict(self, include_memory: bool = False) -> dict[str, Any]:
        # The block in progress is small and part of the policy's data: always kept.
        return super().state_dict(include_memory=True)
