"""Clipped PPO (Schulman et al., 2017, "Proximal Policy Optimization Algorithms").

On-policy: the agent fills a T x B rollout block from its B env copies with its current
policy, computes GAE(lambda) advantages over the block (bootstrapping on truncation, not on
termination), then runs epochs of minibatch updates of

    L = -E[min(r A, clip(r, 1 - eps, 1 + eps) A)] + c_v (V - R)^2 - c_e H,   r = pi / pi_old

with normalized advantages, optional value clipping, schedules for the learning rate and the
clip range (over training env steps), and an early stop of the epochs when the approximate
KL divergence passes ``target_kl``. Discrete actions use a categorical policy, Box actions a
diagonal Gaussian (squashed or clipped into the bounds). The policy and the value function
share a network (``main``, with a policy and a ``v`` head) or have their own (``actor`` and
``critic``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from coach.agents.agent import Agent, AgentParameters, AlgorithmParameters
from coach.core.run_phase import RunPhase
from coach.core.types import ActionInfo, Batch, EnvResponse, Observation
from coach.errors import CoachError
from coach.memories.rollout import Rollout, RolloutParameters
from coach.networks.distributions import CategoricalPolicy, GaussianPolicy
from coach.networks.heads import (
    CategoricalPolicyHeadParameters,
    VHeadParameters,
)
from coach.networks.parameters import MiddlewareParameters, NetworkParameters
from coach.schedules import ConstantSchedule, Schedule


def clipped_surrogate_loss(
    log_prob: torch.Tensor, old_log_prob: torch.Tensor, advantages: torch.Tensor, clip: float
) -> torch.Tensor:
    """-E[min(r A, clip(r, 1 - clip, 1 + clip) A)] with r = exp(log_prob - old_log_prob).

    The gradient vanishes for rows whose ratio already left the trust region in the
    direction their advantage pushes (r > 1 + clip with A > 0, r < 1 - clip with A < 0).
    """
    ratio = (log_prob - old_log_prob).exp()
    return -torch.min(ratio * advantages, ratio.clamp(1 - clip, 1 + clip) * advantages).mean()


@dataclass(slots=True, kw_only=True)
class ClippedPPOAlgorithmParameters(AlgorithmParameters):
    """Clipped PPO's algorithm parameters."""

    gae_lambda: float = 0.95
    """GAE's lambda."""
    epochs: int = 10
    """Passes over each rollout block."""
    clip_range_schedule: Schedule = field(default_factory=lambda: ConstantSchedule(0.2))
    """The ratio clip range over training env steps."""
    learning_rate_schedule: Schedule | None = None
    """The learning rate over training env steps (``None`` keeps the networks' own)."""
    value_clip_range: float | None = None
    """Clip the value update around the old values by this much (``None``: no clipping)."""
    value_coefficient: float = 0.5
    """Weight of the value loss."""
    entropy_coefficient: float = 0.0
    """Weight of the entropy bonus."""
    normalize_advantages: bool = True
    """Standardize the advantages of each minibatch."""
    target_kl: float | None = None
    """Stop the epochs of a block once the approximate KL passes 1.5 times this."""
    squash_actions: bool = False
    """Box actions: tanh-squash the Gaussian into the bounds (else clip into them)."""


def _default_networks() -> dict[str, NetworkParameters]:
    return {
        "main": NetworkParameters(
            middleware=MiddlewareParameters(scheme=[64, 64], activation="tanh"),
            heads=[CategoricalPolicyHeadParameters(), VHeadParameters()],
            learning_rate=3e-4,
            gradient_clip_norm=0.5,
        )
    }


@dataclass(slots=True, kw_only=True)
class ClippedPPOAgentParameters(AgentParameters):
    """A Clipped PPO agent."""

    algorithm: ClippedPPOAlgorithmParameters = field(default_factory=ClippedPPOAlgorithmParameters)
    """The algorithm's parameters (``batch_size`` is the minibatch size)."""
    memory: Any = field(default_factory=RolloutParameters)
    """The rollout block (``rollout_length`` steps per env copy)."""
    network_wrappers: dict[str, NetworkParameters] = field(default_factory=_default_networks)
    """``main`` with policy and ``v`` heads, or ``actor`` (policy) and ``critic`` (``v``)."""

    def agent_class(self) -> type[ClippedPPOAgent]:
        return ClippedPPOAgent


class ClippedPPOAgent(Agent):
    """Clipped PPO on T x B rollout blocks."""

    params: ClippedPPOAgentParameters

    def __init__(self, params: ClippedPPOAgentParameters, *args: Any, **kwargs: Any) -> None:
        super().__init__(params, *args, **kwargs)
        nets = self.networks
        if "main" in nets:
            self.actor = self.critic = nets["main"]
        elif {"actor", "critic"} <= set(nets):
            self.actor, self.critic = nets["actor"], nets["critic"]
        else:
            raise CoachError("Clipped PPO needs a 'main' network, or 'actor' and 'critic'")
        if not isinstance(self.memory, Rollout):
            raise CoachError("Clipped PPO learns from a rollout block (RolloutParameters)")
        self.rollout: Rollout = self.memory
        self.continuous = isinstance(self.action_space, spaces.Box)
        if self.continuous:
            assert isinstance(self.action_space, spaces.Box)
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

    def _tensors(self, observation: Observation) -> dict[str, torch.Tensor]:
        return {k: torch.as_tensor(v, device=self.device) for k, v in observation.items()}

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
            tensors = self._tensors(state)
            dist = self.distribution(tensors)
            if self.phase is RunPhase.EVALUATE:
                action = dist.mode()
                return ActionInfo(action=action.cpu().numpy())
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
        return ActionInfo(action=action.cpu().numpy(), log_prob=self._last["log_prob"])

    # -- collecting -------------------------------------------------------------------------

    def store(self, next_state: Observation, reward: np.ndarray, response: EnvResponse) -> None:
        # Only the current policy's own steps are on-policy data (not heatup's random ones).
        if self.phase is not RunPhase.TRAIN:
            return
        assert self.last_action is not None
        self.rollout.store(
            self.state, self.last_action, reward, next_state, response.terminated,
            response.truncated, extras=self._last,
        )  # fmt: skip

    def reset(self, response: EnvResponse) -> None:
        # The episodes in the block stop here: mark the block's last step as truncated, so
        # GAE bootstraps from its successor and does not run on into the new episodes.
        if self.rollout.steps > 0:
            self.rollout.columns["truncated"][self.rollout.steps - 1] = True
        super().reset(response)

    # -- learning ---------------------------------------------------------------------------

    def train(self) -> int:
        if self.phase is not RunPhase.TRAIN or not self.rollout.full:
            return 0
        algorithm = self.params.algorithm
        progress = self.training_env_steps
        if algorithm.learning_rate_schedule is not None:
            rate = algorithm.learning_rate_schedule.value(progress)
            for net in {id(self.actor): self.actor, id(self.critic): self.critic}.values():
                for group in net.optimizer.param_groups:
                    group["lr"] = rate
        self._clip = algorithm.clip_range_schedule.value(progress)
        c = self.rollout.columns
        with torch.no_grad():
            last = self.values(self._tensors(self.state)).cpu().numpy()
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
        steps = 0
        totals: dict[str, float] = {}
        for _ in range(algorithm.epochs):
            stop = False
            for batch in self.rollout.minibatches(algorithm.batch_size):
                losses = self.learn_from_batch(batch)
                for name, value in losses.items():
                    totals[name] = totals.get(name, 0.0) + value
                steps += 1
                if (
                    algorithm.target_kl is not None
                    and losses["approx_kl"] > 1.5 * algorithm.target_kl
                ):
                    stop = True
                    break
            if stop:
                break
        self.rollout.clear()
        self.training_rounds += 1
        self.training_steps += steps
        for name, total in totals.items():
            self.log.scalar(f"Loss/{name}", total / max(steps, 1))
        self.log.scalar("Loss/clip_range", self._clip)
        return steps

    def learn_from_batch(self, batch: Batch) -> dict[str, float]:
        algorithm = self.params.algorithm
        clip = getattr(self, "_clip", algorithm.clip_range_schedule.value(self.training_env_steps))
        b = batch.map(lambda a: torch.as_tensor(a, device=self.device))
        dist = self.distribution(b.states)
        taken = b.extras["raw_action"] if self.continuous else b.actions
        log_prob = dist.log_prob(taken)
        advantages = b.extras["advantages"]
        if algorithm.normalize_advantages and len(advantages) > 1:
            advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)

        policy_loss = clipped_surrogate_loss(log_prob, b.extras["log_prob"], advantages, clip)
        values = self.values(b.states)
        if algorithm.value_clip_range is not None:
            old = b.extras["value"]
            clipped = old + (values - old).clamp(
                -algorithm.value_clip_range, algorithm.value_clip_range
            )
            value_loss = torch.max(
                (values - b.extras["returns"]) ** 2, (clipped - b.extras["returns"]) ** 2
            ).mean()
        else:
            value_loss = ((values - b.extras["returns"]) ** 2).mean()
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
            ratio = log_ratio.exp()
            approx_kl = ((ratio - 1) - log_ratio).mean().item()
            clip_fraction = ((ratio - 1).abs() > clip).float().mean().item()
        return {
            "policy_loss": policy_loss.item(),
            "value_loss": value_loss.item(),
            "entropy": entropy.item(),
            "approx_kl": approx_kl,
            "clip_fraction": clip_fraction,
        }

    def state_dict(self, include_memory: bool = False) -> dict[str, Any]:
        # The block in progress is small and part of the policy's data: always kept.
        return super().state_dict(include_memory=True)
