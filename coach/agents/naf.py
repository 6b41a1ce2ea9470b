"""Normalized Advantage Functions (Gu et al., 2016, "Continuous Deep Q-Learning with
Model-based Acceleration"): Q-learning for continuous actions.

One network answers ``mu(s)``, ``V(s)`` and ``L(s)``, and Q(s, a) = V(s) - 1/2 (a - mu)^T
L L^T (a - mu) (`coach.networks.naf_head`): its greedy action is ``mu(s)`` in closed form
and its greedy value is ``V(s)``, so the TD target ``r + discount * V'(s')`` needs no
maximization. Acting is ``mu(s)`` plus the exploration's noise (Ornstein-Uhlenbeck by
default, as in the paper and the original Coach), none in evaluation. A target network
follows the online one by Polyak averaging; n-step returns, prioritized replay and the loss
are the value family's (`coach.agents.q_learning`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from coach.agents.acting import DeterministicPolicy, Policy
from coach.agents.learning import Learner, td_targets
from coach.agents.parameters import AgentParameters
from coach.agents.q_learning import QAgent, QLearner, QLearningAlgorithmParameters, regress_q
from coach.core.step_units import EnvironmentSteps
from coach.core.types import Batch, Observation
from coach.errors import CoachError
from coach.exploration.exploration_policy import ExplorationParameters
from coach.exploration.ou_process import OUProcessParameters
from coach.memories.experience_replay import ExperienceReplayParameters
from coach.memories.memory import MemoryParameters
from coach.networks.heads import DeterministicPolicyHeadParameters, VHeadParameters
from coach.networks.naf_head import PrecisionHeadParameters, naf_q
from coach.networks.parameters import MiddlewareParameters, NetworkParameters


def naf_network(scheme: list[int], learning_rate: float) -> NetworkParameters:
    """A NAF network: an MLP over the observation and the heads ``policy`` (mu, tanh-squashed
    into the action box: a mean left unbounded ran out of the box on Pendulum, where the
    advantage's curvature then fell to zero and the policy with it), ``v`` and
    ``precision`` (L), with a target copy."""
    return NetworkParameters(
        middleware=MiddlewareParameters(scheme=list(scheme)),
        heads=[DeterministicPolicyHeadParameters(), VHeadParameters(), PrecisionHeadParameters()],
        learning_rate=learning_rate,
        create_target_network=True,
    )


@dataclass(slots=True, kw_only=True)
class NAFAlgorithmParameters(QLearningAlgorithmParameters):
    """NAF's algorithm parameters (the original Coach's): 5 gradient steps per env step, the
    target network 0.001 of the way to the online one after every env step, squared loss."""

    num_consecutive_training_steps: int = 5
    """Gradient steps per round."""
    num_steps_between_copying_online_weights_to_target: Any = field(
        default_factory=lambda: EnvironmentSteps(1)
    )
    """Training env steps between two moves of the target network."""
    target_update_rate: float = 0.001
    """How far each move takes the target towards the online weights."""
    loss: str = "mse"
    """The TD loss: ``mse`` (the paper's) or ``huber``."""


@dataclass(slots=True, kw_only=True)
class NAFAgentParameters(AgentParameters):
    """A NAF agent: Ornstein-Uhlenbeck exploration, uniform replay, one network of 200x200
    units with the heads mu, V and L, Adam at 1e-3."""

    algorithm: NAFAlgorithmParameters = field(default_factory=NAFAlgorithmParameters)
    """The algorithm's parameters."""
    exploration: ExplorationParameters | None = field(default_factory=OUProcessParameters)
    """Noise added to ``mu(s)`` in training (`OUProcessParameters` or
    `AdditiveNoiseParameters`)."""
    memory: MemoryParameters | None = field(default_factory=ExperienceReplayParameters)
    """The replay memory."""
    network_wrappers: dict[str, NetworkParameters] = field(
        default_factory=lambda: {"main": naf_network([200, 200], 1e-3)}
    )
    """The NAF network (``main``)."""

    def agent_class(self) -> type[NAFAgent]:
        return NAFAgent


class NAFAgent(QAgent):
    """NAF: the value family's storing and target syncs, acting on ``mu(s)``."""

    params: NAFAgentParameters

    def __init__(self, params: NAFAgentParameters, *args: Any, **kwargs: Any) -> None:
        heads = {head.name for head in params.network_wrappers["main"].heads}
        if not {"policy", "v", "precision"} <= heads:
            raise CoachError(
                f"NAF's 'main' network needs the heads 'policy', 'v' and 'precision' "
                f"(coach.agents.naf.naf_network), got {sorted(heads)}"
            )
        super().__init__(params, *args, **kwargs)

    def action_values(self, outputs: dict[str, torch.Tensor]) -> torch.Tensor:
        raise CoachError("NAF's actions are continuous: it has no Q-value per action")

    def make_policy(self) -> Policy:
        return DeterministicPolicy(self.networks["main"], **self.policy_arguments())

    def make_learner(self) -> Learner:
        return NAFLearner(**self.learner_arguments())

    def evaluation_policy(self, states: Observation) -> tuple[np.ndarray, np.ndarray]:
        raise CoachError("off-policy evaluation needs discrete actions; NAF's are continuous")


class NAFLearner(QLearner):
    """NAF's update: Q(s, a) = V(s) + A(s, a) towards ``r + discount^k * V'(s')`` (nothing
    past a termination), the value family's loss."""

    def learn(self, batch: Batch) -> dict[str, float | torch.Tensor]:
        b = self.sampled(batch)
        q = naf_q(self.q_network(b.states), b.actions)
        with torch.no_grad():
            next_values = self.q_network.target_predict(b.next_states)["v"]
            discount = b.extras.get("discount", self.algorithm.discount)  # g^k of n-step rows
            target = td_targets(b.rewards, discount, b.terminated, next_values)
        return regress_q(self, b, q, target)


__all__ = [
    "NAFAgent",
    "NAFAgentParameters",
    "NAFAlgorithmParameters",
    "NAFLearner",
    "naf_network",
]
