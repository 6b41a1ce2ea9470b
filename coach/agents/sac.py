"""Soft Actor-Critic (Haarnoja et al., "Soft Actor-Critic Algorithms and Applications", 2018).

A stochastic actor, a Gaussian squashed into the action bounds by tanh, trained to maximize
``Q(s, a) - alpha * log pi(a|s)``; two critics regressing on the soft target
``r + discount * (min Q'(s', a') - alpha * log pi(a'|s'))`` with ``a' ~ pi(s')``, their target
copies following by soft updates; and the temperature ``alpha`` tuned automatically so that
the policy's entropy stays near ``target_entropy`` (``-dim(A)`` by default). The policy's own
randomness explores in training; evaluation acts with the squashed mean.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from coach import validation as check
from coach.agents.acting import Policy
from coach.agents.critics import (
    ActorCriticAlgorithmParameters,
    ActorCriticLearner,
    ContinuousActorCritic,
    ContinuousActorCriticAgentParameters,
    actor_network,
    critic_network,
    with_action,
)
from coach.agents.learning import Learner, learning_rate_at, on_device
from coach.core.run_phase import RunPhase
from coach.core.types import ActionInfo, Batch, Observation
from coach.errors import CoachError
from coach.exploration.exploration_policy import ExplorationParameters
from coach.networks.distributions import GaussianDistribution
from coach.networks.heads import GaussianPolicyHeadParameters
from coach.networks.optimizer import Adam
from coach.networks.parameters import NetworkParameters

ActorDistribution = Callable[[dict[str, torch.Tensor]], GaussianDistribution]
"""The actor's squashed Gaussian for a batch of states: what the policy samples and the
learner trains through."""


@dataclass(slots=True, kw_only=True)
class SACAlgorithmParameters(ActorCriticAlgorithmParameters):
    """SAC's algorithm parameters (the paper's, as SB3 keeps them)."""

    target_entropy: float | None = None
    """The entropy the temperature steers the policy to; ``None`` is ``-dim(A)``."""
    initial_temperature: float = 1.0
    """``alpha`` at the start."""
    learn_temperature: bool = True
    """Tune ``alpha`` (else it stays at ``initial_temperature``)."""
    temperature_learning_rate: float = 3e-4
    """Adam's step size for ``log alpha``."""

    def validate(self) -> None:
        ActorCriticAlgorithmParameters.validate(self)
        if self.target_entropy is not None:
            check.number("target_entropy", self.target_entropy)
        check.number("initial_temperature", self.initial_temperature, 0, low_open=True)
        check.number("temperature_learning_rate", self.temperature_learning_rate, 0)


def _sac_networks() -> dict[str, NetworkParameters]:
    head = GaussianPolicyHeadParameters(state_dependent_std=True)
    return {
        "actor": actor_network([256, 256], 3e-4, head=head, target=False),
        "critic_1": critic_network([256, 256], 3e-4),
        "critic_2": critic_network([256, 256], 3e-4),
    }


@dataclass(slots=True, kw_only=True)
class SACAgentParameters(ContinuousActorCriticAgentParameters):
    """A SAC agent: a squashed Gaussian actor, twin critics with targets, uniform replay."""

    algorithm: SACAlgorithmParameters = field(default_factory=SACAlgorithmParameters)
    """The algorithm's parameters."""
    exploration: ExplorationParameters | None = None
    """None: the stochastic policy explores by itself."""
    network_wrappers: dict[str, NetworkParameters] = field(default_factory=_sac_networks)
    """The ``actor`` (a state-dependent Gaussian head) and ``critic_1``, ``critic_2``."""

    def agent_class(self) -> type[SACAgent]:
        return SACAgent


class SamplingPolicy(Policy):
    """Acts by sampling the actor's squashed Gaussian in training, with its mode in
    evaluation (and while the level above tests a subgoal): the policy explores by itself.

    Args:
        distribution: The actor's distribution for a batch of states.
        **kwargs: `Policy`'s arguments.
    """

    def __init__(
        self,
        distribution: ActorDistribution,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.distribution = distribution

    def decide(self, state: Observation, phase: RunPhase) -> ActionInfo:
        with torch.no_grad():
            distribution = self.distribution(self.tensors(state))
            log_prob = None
            if phase is RunPhase.EVALUATE or not self.explore:
                actions = distribution.mode()
            else:
                actions, u = distribution.sample(self.torch_generator)
                if self.log_behaviour:  # a dataset is being recorded: the action's density
                    log_prob = distribution.log_prob(u).cpu().numpy()
        action = actions.cpu().numpy().astype(self.action_space.dtype)
        return ActionInfo(action=action, log_prob=log_prob)

    def greedy(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.distribution(inputs).mode()


class SACAgent(ContinuousActorCritic):
    """SAC: maximum-entropy actor-critic with twin critics and a learned temperature."""

    params: SACAgentParameters

    critic_names = ("critic_1", "critic_2")

    def __init__(self, params: SACAgentParameters, *args: Any, **kwargs: Any) -> None:
        actor = params.network_wrappers.get("actor")
        if actor is not None and actor.create_target_network:
            raise CoachError("SAC's actor has no target network (create_target_network=False)")
        super().__init__(params, *args, **kwargs)

    def follow_learning_rate(self) -> None:
        """The networks' rates, and the temperature's: a learning rate schedule sets it as
        it sets theirs, a decay scales ``temperature_learning_rate`` (Stable-Baselines3's
        schedule moves the entropy coefficient's optimizer with the others)."""
        super().follow_learning_rate()
        algorithm = self.params.algorithm
        if not isinstance(self.learner, SACLearner) or (
            algorithm.learning_rate_schedule is None and algorithm.learning_rate_decay is None
        ):
            return
        rate = learning_rate_at(
            algorithm.temperature_learning_rate,
            algorithm.learning_rate_schedule,
            algorithm.learning_rate_decay,
            self.schedule_clock().count(algorithm.learning_rate_clock),
        )
        for group in self.learner.alpha_optimizer.param_groups:
            group["lr"] = rate

    def distribution(self, states: dict[str, torch.Tensor]) -> GaussianDistribution:
        """The actor's squashed Gaussian for a batch of states."""
        out = self.actor(states)["policy"]
        return GaussianDistribution(out[:, 0], out[:, 1], self.low, self.high, squash=True)

    def make_policy(self) -> Policy:
        return SamplingPolicy(self.distribution, **self.policy_arguments())

    def make_learner(self) -> Learner:
        return SACLearner(distribution=self.distribution, **self.learner_arguments())


class SACLearner(ActorCriticLearner):
    """SAC's update: both critics on the soft target, the actor on ``alpha log pi - min Q``
    through a reparameterized sample, the temperature towards the target entropy, the
    critics' targets a step closer.

    Args:
        distribution: The actor's squashed Gaussian for a batch of states.
        **kwargs: `ActorCriticLearner`'s arguments.
    """

    algorithm: SACAlgorithmParameters

    def __init__(
        self,
        distribution: ActorDistribution,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.distribution = distribution
        algorithm = self.algorithm
        dims = int(np.prod(self.action_space.shape or ()))
        self.target_entropy = (
            float(-dims) if algorithm.target_entropy is None else algorithm.target_entropy
        )
        self.log_alpha = torch.tensor(
            math.log(algorithm.initial_temperature), device=self.device, requires_grad=True
        )
        self.alpha_optimizer = Adam([self.log_alpha], lr=algorithm.temperature_learning_rate)

    @property
    def alpha(self) -> float:
        return float(self.log_alpha.detach().exp())

    def bootstrap_values(self, next_states: dict[str, torch.Tensor]) -> torch.Tensor:
        """The soft value of the next states: ``min Q'(s', a') - alpha log pi(a'|s')``."""
        distribution = self.distribution(next_states)
        actions, u = distribution.sample(self.torch_generator)
        inputs = with_action(next_states, actions)
        q = self.critics.target_min(inputs)
        return q - self.log_alpha.detach().exp() * distribution.log_prob(u)

    def learn(self, batch: Batch) -> dict[str, float | torch.Tensor]:
        algorithm = self.algorithm
        b = on_device(batch, self.device)
        losses = self.regress_critics(b)  # both on the soft target
        # The actor: alpha log pi(a|s) - min Q(s, a), with a drawn by reparameterization
        # (mean + std * noise: a gradient flows through it); the critics take none.
        with self.critics.frozen():
            distribution = self.distribution(b.states)
            actions, u = distribution.sample(self.torch_generator)
            log_prob = distribution.log_prob(u)
            state_actions = with_action(b.states, actions)
            q_new = self.critics.online_min(state_actions)
            actor_loss = (self.log_alpha.detach().exp() * log_prob - q_new).mean()
            self.actor.train_step(actor_loss)
        losses["actor_loss"] = actor_loss.detach()
        losses["entropy"] = -log_prob.detach().mean()
        if algorithm.learn_temperature:
            # d/d(log alpha) of -log alpha * (log pi + target): alpha rises while the entropy
            # is below its target.
            temperature_loss = -(self.log_alpha * (log_prob.detach() + self.target_entropy)).mean()
            self.alpha_optimizer.zero_grad(set_to_none=True)
            temperature_loss.backward()
            self.alpha_optimizer.step()
            losses["temperature_loss"] = temperature_loss.detach()
        losses["alpha"] = self.log_alpha.detach().exp()
        self.critics.update_target(algorithm.tau)  # the actor has no target
        return losses

    def state_dict(self) -> dict[str, Any]:
        return {
            **super().state_dict(),
            "log_alpha": self.log_alpha.detach().clone(),
            "temperature_optimizer": self.alpha_optimizer.state_dict(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        with torch.no_grad():
            self.log_alpha.copy_(state["log_alpha"])
        # A copy: torch's optimizer would otherwise share the moment tensors it was given.
        self.alpha_optimizer.load_state_dict(copy.deepcopy(state["temperature_optimizer"]))
