"""The on-policy learning side: the algorithm parameters every on-policy algorithm shares,
the pieces of their updates as functions (`approx_kl`, `value_error`, `LossTotals`) and the
family's learner base, `OnPolicyLearner`: the block (a `Rollout`), GAE over it, its
minibatches, the current policy's view of a minibatch and the gradient step on the combined
loss. Each algorithm's learner (REINFORCE and A2C, PPO, Clipped PPO) derives from it
directly and writes its `learn_block`, top to bottom.

With recurrent networks the same update runs over sequences: each env copy's column of the
block is cut into sequences (``sequence_length`` steps, the whole block by default), a
minibatch holds whole sequences, and the networks are unrolled over them from the hidden
state stored with their first step, zeroed again wherever an episode starts inside
(`coach.agents.hidden_state`). The losses then read the minibatch's steps as rows, as the
feed-forward update does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from coach import validation as check
from coach.agents.algorithm import AlgorithmParameters, validate_rhythm
from coach.agents.learning import Clock, Learner, on_device
from coach.core.action_masks import ACTION_MASK
from coach.core.recurrent_columns import (
    EPISODE_START,
    HIDDEN,
    NEXT_HIDDEN,
    hidden_key,
    next_hidden_key,
)
from coach.core.types import Batch
from coach.memories.block_queue import BlockQueue
from coach.memories.rollout import VALID, Rollout
from coach.networks.distributions import CategoricalDistribution, GaussianDistribution
from coach.networks.network_wrapper import NetworkWrapper, train_steps
from coach.networks.recurrence import Stretches

Distribution = CategoricalDistribution | GaussianDistribution
"""A policy's distribution over actions: categorical or (squashed) Gaussian."""


@dataclass(slots=True, kw_only=True)
class OnPolicyAlgorithmParameters(AlgorithmParameters):
    """What every on-policy algorithm here shares."""

    gae_lambda: float = 0.95
    """GAE's lambda (1: Monte Carlo returns)."""
    epochs: int = 1
    """Passes over each rollout block."""
    value_coefficient: float = 0.5
    """Weight of the value loss."""
    entropy_coefficient: float = 0.0
    """Weight of the entropy bonus."""
    normalize_advantages: bool = True
    """Standardize the advantages of each minibatch."""
    squash_actions: bool = False
    """Box actions: tanh-squash the Gaussian into the bounds (else clip into them)."""
    sequence_length: int | None = None
    """Recurrent networks: steps per training sequence (``None``: a whole block column);
    ``batch_size`` then counts the steps of whole sequences."""
    deterministic_evaluation: bool = True
    """Evaluate with the policy's mode (its likeliest action, its Gaussian's mean); with
    ``False``, with actions sampled from the policy, as it acts in training (Tianshou's
    ``deterministic_eval=False``). A mode can hold an agent where its samples would move on:
    Breakout's serve waits for FIRE, and a policy whose mode there is another action plays
    out the 27,000 steps of a truncated episode. An exported policy acts by its mode."""

    def validate(self) -> None:
        validate_rhythm(self)
        if self.sequence_length is not None:
            check.whole("sequence_length", self.sequence_length, 1)
        check.whole("batch_size", self.batch_size, 0, why="0: the whole block at once")
        check.number("gae_lambda", self.gae_lambda, 0, 1)
        check.whole("epochs", self.epochs, 1)
        check.number("value_coefficient", self.value_coefficient, 0)
        check.number("entropy_coefficient", self.entropy_coefficient)


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


@dataclass(slots=True)
class PolicyView:
    """What the current networks make of a minibatch."""

    rows: Batch
    """The minibatch's steps as rows (N,): a batch of sequences flattened."""
    distribution: Distribution
    """The current policy's distribution in each row's state."""
    log_prob: torch.Tensor
    """The log-probability of each row's action under it (of the pre-squash sample, for a
    Gaussian)."""
    advantages: torch.Tensor
    """The rows' advantages (standardized when ``normalize_advantages``)."""
    values: torch.Tensor
    """The current critic's value of each row's state."""


def actor_and_critic(networks: dict[str, NetworkWrapper]) -> tuple[NetworkWrapper, NetworkWrapper]:
    """The policy's network and the value function's: ``main`` for both, or ``actor`` and
    ``critic``."""
    if "main" in networks:
        return networks["main"], networks["main"]
    return networks["actor"], networks["critic"]


class OnPolicyLearner(Learner):
    """What every on-policy learner shares: the block (the memory, a `Rollout`), GAE over it
    (`compute_advantages`), its minibatches, the current policy's view of a minibatch
    (`evaluate`) and the gradient step on the combined loss (`descend`). The algorithm is
    the subclass's `learn_block`.

    Args:
        algorithm: The algorithm's parameters.
        distribution: The (feed-forward) actor's distribution for a batch of states.
        values: The (feed-forward) critic's values for a batch of states, (B,).
        distribution_of: The distribution from the actor's ``policy`` head output and the
            states' action mask (None without one).
        **kwargs: `Learner`'s arguments; the memory is the rollout block.
    """

    def __init__(
        self,
        algorithm: OnPolicyAlgorithmParameters,
        distribution: Callable[[dict[str, torch.Tensor]], Distribution],
        values: Callable[[dict[str, torch.Tensor]], torch.Tensor],
        distribution_of: Callable[[torch.Tensor, torch.Tensor | None], Distribution],
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.algorithm = algorithm
        self.distribution = distribution
        self.values = values
        self.distribution_of = distribution_of
        assert isinstance(self.memory, Rollout | BlockQueue)
        self.actor, self.critic = actor_and_critic(self.networks)
        self.names = {net: name for name, net in self.networks.items()}
        self.recurrent = self.actor.recurrent or self.critic.recurrent
        """The networks learn over sequences."""
        self.continuous = isinstance(self.action_space, spaces.Box)

    @property
    def rollout(self) -> Rollout:
        """The block learned from: the memory itself, or the batch of blocks last taken from
        a `BlockQueue` (an asynchronous actor-learner's)."""
        memory = self.memory
        if isinstance(memory, Rollout):
            return memory
        assert isinstance(memory, BlockQueue)
        return memory.batch

    def learn_block(self, clock: Clock) -> tuple[int, dict[str, float]]:
        """Learn from the full rollout block; returns the gradient steps taken and the mean
        of each named loss."""
        raise NotImplementedError(f"{type(self).__name__} does not learn from its blocks")

    def compute_advantages(self) -> None:
        """GAE over the full block, bootstrapped from the values after its last step and
        after every truncation in it (`Rollout.compute_advantages`)."""
        algorithm = self.algorithm
        rollout = self.rollout
        c = rollout.columns
        steps = rollout.steps
        with torch.no_grad():
            # The states after each slot's last step (where an episode ended there, the
            # value is not used): the block's own, wherever it was collected.
            last = self.successor_values(*rollout.last_steps())
            final = np.zeros((steps, rollout.num_envs), dtype=np.float64)
            truncated = c["truncated"][:steps]
            if not rollout.aligned:
                truncated = truncated & rollout.valid()  # not what a cell held before
            t, b = np.nonzero(truncated)
            if len(t):
                final[t, b] = self.successor_values(t, b)
        rollout.compute_advantages(
            values=c["extras"]["value"][:steps].astype(np.float64),
            last_values=last.astype(np.float64),
            final_values=final,
            discount=algorithm.discount,
            gae_lambda=algorithm.gae_lambda,
        )

    @torch.no_grad()
    def successor_values(self, t: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The critic's values of the next states of the block's steps ``(t, b)``: a
        recurrent critic's from the hidden state after each step (stored with it)."""
        c = self.rollout.columns
        states = self.tensors({k: v[t, b] for k, v in c["next_states"].items()})
        if not self.critic.recurrent:
            values: np.ndarray = self.values(states).cpu().numpy()
            return values
        hidden = c["extras"][next_hidden_key(self.names[self.critic])][t, b]
        outputs, _ = self.critic.online.step(states, torch.as_tensor(hidden, device=self.device))
        stepped: np.ndarray = outputs["v"].cpu().numpy()
        return stepped

    def minibatches(self) -> Iterator[Batch]:
        """The block's rows in shuffled minibatches of ``batch_size`` (0: the whole block),
        as tensors on the learner's device; with recurrent networks, whole sequences
        (`Rollout.sequence_minibatches`, time-major)."""
        size = self.algorithm.batch_size or len(self.rollout)
        if self.recurrent:
            length = self.algorithm.sequence_length or self.rollout.length
            # The states a sequence is unrolled from are its first step's; the others no
            # learning reads, so they are not copied row by row either.
            recurrent = [name for name, net in self.networks.items() if net.recurrent]
            states = [key(name) for name in recurrent for key in (hidden_key, next_hidden_key)]
            batches = self.rollout.sequence_minibatches(length, size, states)
        else:
            batches = self.rollout.minibatches(size)
        for batch in batches:
            yield on_device(batch, self.device)

    def evaluate(self, b: Batch) -> PolicyView:
        """What the current networks make of a minibatch (`PolicyView`): a recurrent
        network's outputs unrolled over its sequences, from the hidden state stored with
        their first step."""
        if self.recurrent:
            layout = Stretches.of(b.extras[EPISODE_START])  # the same for both networks
            actor = self.unroll(self.actor, b, layout)
            critic = actor if self.critic is self.actor else self.unroll(self.critic, b, layout)
            steps = {k: v for k, v in b.extras.items() if not k.startswith((HIDDEN, NEXT_HIDDEN))}
            valid = steps.pop(VALID, None)  # sequences that run past their slot's steps
            b = replace(b, extras=steps).map(lambda column: column.flatten(0, 1))
            policy = actor["policy"].flatten(0, 1)
            values = critic["v"].flatten(0, 1)
            if valid is not None:
                keep = valid.flatten()
                b, policy, values = b.map(lambda column: column[keep]), policy[keep], values[keep]
            dist = self.distribution_of(policy, b.states.get(ACTION_MASK))
        else:
            dist = self.distribution(b.states)
            values = self.values(b.states)
        log_prob = dist.log_prob(b.extras["raw_action"] if self.continuous else b.actions)
        advantages = b.extras["advantages"]
        if self.algorithm.normalize_advantages and len(advantages) > 1:
            advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        return PolicyView(b, dist, log_prob, advantages, values)

    def unroll(
        self, network: NetworkWrapper, b: Batch, layout: Stretches
    ) -> dict[str, torch.Tensor]:
        """A network's outputs over a minibatch of sequences (T, N, ...): unrolled from the
        state stored with each sequence's first step (a feed-forward one row by row)."""
        if not network.recurrent:
            flat = {k: v.flatten(0, 1) for k, v in b.states.items()}
            return {k: v.unflatten(0, b.rewards.shape[:2]) for k, v in network(flat).items()}
        hidden = b.extras[hidden_key(self.names[network])]  # each sequence's first step's
        return network.online.sequence_outputs(b.states, hidden, layout)

    def descend(
        self, policy_loss: torch.Tensor, value_loss: torch.Tensor, entropy: torch.Tensor
    ) -> None:
        """One gradient step on ``policy + c_v value - c_e entropy``: on the shared network,
        or the policy's part on the actor and the value's on the critic."""
        algorithm = self.algorithm
        if self.actor is self.critic:
            self.actor.train_step(
                policy_loss
                + algorithm.value_coefficient * value_loss
                - algorithm.entropy_coefficient * entropy
            )
        else:
            train_steps(
                [
                    (self.actor, policy_loss - algorithm.entropy_coefficient * entropy),
                    (self.critic, algorithm.value_coefficient * value_loss),
                ]
            )
