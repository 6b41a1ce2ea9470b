"""Deep Q-Network (Mnih et al., 2015, "Human-level control through deep reinforcement learning").

Q-learning with a replay memory and a target network: each gradient step regresses
Q(s, a) towards r + discount * max_a' Q_target(s', a'), where the bootstrap term is dropped
only for terminal transitions (a time-limit truncation still bootstraps).

This module is also the base of the value-based family: ``n_step`` sums n rewards before
bootstrapping (the memory then stores each transition's own discount), a prioritized memory
gets its TD errors back and weighs the loss with its importance weights, and the variants
override `bootstrap_values` (Double DQN), or `action_values` and `td_loss` (C51, QR-DQN).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from gymnasium import spaces

from coach import validation as check
from coach.agents.agent import Agent, AgentParameters, AlgorithmParameters
from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentSteps, TrainingSteps
from coach.core.types import ActionInfo, Batch, EnvResponse, Observation
from coach.errors import CoachError
from coach.exploration.e_greedy import EGreedy, EGreedyParameters
from coach.memories.experience_replay import ExperienceReplayParameters
from coach.memories.n_step import NStepAccumulator
from coach.networks.parameters import NetworkParameters

LOSSES = ("huber", "mse")

EVALUATION_CHUNK = 8192
"""States per forward pass in `DQNAgent.evaluation_policy`."""


@dataclass(slots=True, kw_only=True)
class DQNAlgorithmParameters(AlgorithmParameters):
    """DQN's algorithm parameters."""

    num_steps_between_copying_online_weights_to_target: EnvironmentSteps | TrainingSteps = field(
        default_factory=lambda: EnvironmentSteps(500)
    )
    """Training env steps (or gradient steps, as batch RL counts) between two copies of the
    online weights into the target network."""
    target_update_rate: float = 1.0
    """How far each of those syncs moves the target towards the online weights: 1 copies
    them; a small rate synced every gradient step (0.005 with ``TrainingSteps(1)``) is
    Polyak averaging, a target that drifts instead of jumping."""
    loss: str = "huber"
    """The TD loss: ``huber`` or ``mse``."""
    huber_delta: float = 1.0
    """Where the Huber loss turns from quadratic to linear."""
    n_step: int = 1
    """Rewards summed before bootstrapping (n-step returns)."""

    def validate(self) -> None:
        AlgorithmParameters.validate(self)
        check.steps(
            "num_steps_between_copying_online_weights_to_target",
            self.num_steps_between_copying_online_weights_to_target,
            (EnvironmentSteps, TrainingSteps),
            1,
        )
        check.number(
            "target_update_rate",
            self.target_update_rate,
            0,
            1,
            low_open=True,
            why="1 copies the online weights, a small rate averages them in",
        )
        check.one_of("loss", self.loss, LOSSES)
        check.number("huber_delta", self.huber_delta, 0, low_open=True)
        check.whole("n_step", self.n_step, 1)


@dataclass(slots=True, kw_only=True)
class BatchDQNAlgorithmParameters(DQNAlgorithmParameters):
    """DQN's parameters for the agents made to learn from a dataset (BCQ, CQL): a batch run
    counts no env steps, so their target syncs count gradient steps."""

    num_steps_between_copying_online_weights_to_target: EnvironmentSteps | TrainingSteps = field(
        default_factory=lambda: TrainingSteps(100)
    )
    """Gradient steps between two copies of the online weights into the target network."""


@dataclass(slots=True, kw_only=True)
class DQNAgentParameters(AgentParameters):
    """A DQN agent: e-greedy exploration, uniform replay, one Q network with a target copy."""

    algorithm: DQNAlgorithmParameters = field(default_factory=DQNAlgorithmParameters)
    """The algorithm's parameters."""
    exploration: Any = field(default_factory=EGreedyParameters)
    """Exploration (e-greedy by default; anything whose policy maps Q-values to actions)."""
    memory: Any = field(default_factory=ExperienceReplayParameters)
    """The replay memory (uniform, or prioritized)."""
    network_wrappers: dict[str, NetworkParameters] = field(
        default_factory=lambda: {"main": NetworkParameters(create_target_network=True)}
    )
    """The Q network (``main``)."""

    def validate(self) -> None:
        check.component("exploration", self.exploration, "EGreedyParameters()", optional=False)
        check.component("memory", self.memory, "ExperienceReplayParameters()", optional=False)
        check.keys("network_wrappers", self.network_wrappers, ("main",))
        AgentParameters.validate(self)

    def agent_class(self) -> type[DQNAgent]:
        return DQNAgent


class DQNAgent(Agent):
    """Deep Q-Network: acting on Q-values through the exploration policy, TD learning."""

    params: DQNAgentParameters

    def __init__(self, params: DQNAgentParameters, *args: Any, **kwargs: Any) -> None:
        super().__init__(params, *args, **kwargs)
        self.q_network = self.networks["main"]
        if self.exploration is None:
            raise CoachError(f"{type(self).__name__} needs an exploration policy")
        self.policy = self.exploration
        self.action_offset = int(getattr(self.action_space, "start", 0))
        self.target_syncs = 0
        algorithm = params.algorithm
        self.n_step = (
            NStepAccumulator(algorithm.n_step, algorithm.discount, self.num_envs)
            if algorithm.n_step > 1
            else None
        )
        self.noisy = self.q_network.online.reset_noise(self.torch_generator)

    @property
    def e_greedy(self) -> EGreedy:
        assert isinstance(self.exploration, EGreedy)
        return self.exploration

    def memory_extras(self) -> dict[str, spaces.Space]:
        if self.params.algorithm.n_step > 1:  # each transition's own g^k
            return {"discount": spaces.Box(0.0, 1.0, shape=(), dtype=np.float32)}
        return {}

    # -- acting -----------------------------------------------------------------------------

    def action_values(self, outputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """Q-values (B, A) from the network's outputs (the expectation, for distributions)."""
        return outputs["q"]

    def acting_values(
        self, q_values: torch.Tensor, states: dict[str, torch.Tensor]
    ) -> torch.Tensor:
        """The values the policy picks its action from (B, A): the Q-values, or fewer of
        them (batch-constrained agents rule actions out with -inf)."""
        return q_values

    def choose_action(self, state: Observation) -> ActionInfo:
        if self.noisy:
            self.q_network.online.reset_noise(self.torch_generator)
        with torch.no_grad():
            inputs = self.tensors(state)
            values = self.action_values(self.q_network(inputs))
            q_values = self.acting_values(values, inputs).cpu().numpy()
        extras = {}
        if self.log_behaviour:  # before get_action moves the exploration's clock on
            extras["action_probabilities"] = self.policy.action_probabilities(q_values, self.phase)
        action = self.policy.get_action(q_values, self.phase)
        return ActionInfo(action=action, action_values=q_values, extras=extras)

    def evaluation_policy(self, states: Observation) -> tuple[np.ndarray, np.ndarray]:
        """For off-policy evaluation: Q(s, .) and the probability of every action under the
        policy this agent is evaluated with, for a whole dataset's states, (N, A) each."""
        count = len(next(iter(states.values())))
        q_parts, probability_parts = [], []
        with torch.no_grad():
            for start in range(0, count, EVALUATION_CHUNK):
                inputs = self.tensors(
                    {k: v[start : start + EVALUATION_CHUNK] for k, v in states.items()}
                )
                q = self.action_values(self.q_network(inputs))
                acting = self.acting_values(q, inputs).cpu().numpy()
                q_parts.append(q.cpu().numpy())
                probability_parts.append(
                    self.policy.action_probabilities(acting, RunPhase.EVALUATE)
                )
        return np.concatenate(q_parts).astype(np.float64), np.concatenate(probability_parts)

    # -- storing ----------------------------------------------------------------------------

    def store(self, next_state: Observation, reward: np.ndarray, response: EnvResponse) -> None:
        if self.n_step is None:
            super().store(next_state, reward, response)
            return
        assert self.last_action is not None
        ready = self.n_step.add(
            self.state, self.last_action, reward, next_state, response.terminated,
            response.truncated,
        )  # fmt: skip
        if ready is not None and self.memory is not None:
            self.memory.store(**ready)

    def reset(self, response: EnvResponse) -> None:
        # Episodes are about to restart: the steps waiting for their n-step return leave now.
        if self.n_step is not None and self.memory is not None:
            ready = self.n_step.flush()
            if ready is not None:
                self.memory.store(**ready)
        super().reset(response)

    # -- learning ---------------------------------------------------------------------------

    def bootstrap_values(self, next_states: dict[str, torch.Tensor]) -> torch.Tensor:
        """max_a' Q_target(s', a'), shape (B,)."""
        return self.action_values(self.q_network.target_predict(next_states)).max(dim=1).values

    def td_loss(
        self, b: Batch, actions: torch.Tensor, discount: torch.Tensor | float
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Per row (B,): the loss, the TD error's magnitude (for priorities), Q(s, a)."""
        q = self.action_values(self.q_network(b.states)).gather(1, actions[:, None]).squeeze(1)
        return self.regression(q, b, discount)

    def regression(
        self, q: torch.Tensor, b: Batch, discount: torch.Tensor | float
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """`td_loss` from Q(s, a) (B,): the loss per row towards the bootstrapped target, the
        TD error's magnitude and Q(s, a), detached."""
        algorithm = self.params.algorithm
        with torch.no_grad():
            not_terminal = 1.0 - b.terminated.float()
            target = b.rewards + discount * not_terminal * self.bootstrap_values(b.next_states)
        if algorithm.loss == "huber":
            rows = F.huber_loss(q, target, delta=algorithm.huber_delta, reduction="none")
        else:
            rows = F.mse_loss(q, target, reduction="none")
        return rows, (q - target).detach().abs(), q.detach()

    def learn_from_batch(self, batch: Batch) -> dict[str, float]:
        b = batch.map(lambda a: torch.as_tensor(a, device=self.device))
        if self.noisy:
            self.q_network.online.reset_noise(self.torch_generator)
            if self.q_network.target is not None:
                self.q_network.target.reset_noise(self.torch_generator)
        actions = (b.actions - self.action_offset).long()
        discount = b.extras.get("discount", self.params.algorithm.discount)
        rows, td_errors, q = self.td_loss(b, actions, discount)
        loss = self.replay_loss(rows, td_errors, b)
        self.q_network.train_step(loss)
        return {
            "q_loss": loss.item(),
            "q_mean": q.mean().item(),
            "td_error": td_errors.mean().item(),
        }

    def replay_loss(self, rows: torch.Tensor, td_errors: torch.Tensor, b: Batch) -> torch.Tensor:
        """The TD loss of batch ``b`` (in torch) from its rows (B,): their mean, weighted by a
        prioritized memory's importance weights; that memory gets the rows' new TD errors."""
        update = getattr(self.memory, "update_priorities", None)
        if update is not None and b.indices is not None:
            update(b.indices.cpu().numpy(), td_errors.cpu().numpy())
        return (rows * b.weights).mean() if b.weights is not None else rows.mean()

    def after_training_round(self) -> None:
        period = self.params.algorithm.num_steps_between_copying_online_weights_to_target
        clock = (
            self.training_steps if isinstance(period, TrainingSteps) else self.training_env_steps
        )
        due = clock // max(period.num_steps, 1)
        if due > self.target_syncs:
            self.q_network.update_target(self.params.algorithm.target_update_rate)
            self.target_syncs = int(due)

    # -- checkpoints ------------------------------------------------------------------------

    def state_dict(self, include_memory: bool = False) -> dict[str, Any]:
        state = super().state_dict(include_memory)
        state["counters"]["target_syncs"] = self.target_syncs
        state["n_step"] = self.n_step.state_dict() if self.n_step is not None else None
        return state

    def load_state_dict(self, state: dict[str, Any], episodes_in_flight: bool = True) -> None:
        super().load_state_dict(state, episodes_in_flight)
        if self.n_step is not None and state.get("n_step") is not None and episodes_in_flight:
            self.n_step.load_state_dict(state["n_step"])


__all__ = ["DQNAgent", "DQNAgentParameters", "DQNAlgorithmParameters"]
