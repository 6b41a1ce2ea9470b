"""What the value-based agents share: their parameters' bases (`QLearningAlgorithmParameters`,
with DQN's `DQNAlgorithmParameters` on it, and `QAgentParameters`), the pieces of a
Q-learning update as functions, `QAgent`, the family's common acting and storing, and
`QLearner`, its common learning state (the Q network, noisy resampling, target syncs).

Each algorithm (DQN, C51, QR-DQN, Bootstrapped DQN, CQL, DDQN-BCQ, NEC, NAF) has an agent
that derives from `QAgent` directly and a learner that derives from `QLearner` directly,
whose `learn` is the update, top to bottom, from these functions; its parameters derive from
the bases here, or from DQN's where it is a variant of DQN: no algorithm inherits another
algorithm's class.

- n-step returns (``n_step > 1``): the last n steps of each env copy wait in an accumulator
  and leave as one transition with its own discount ``g^k`` (`coach.memories.n_step`);
- prioritized replay: `replay_mean` weighs the rows by their importance weights and gives
  the memory its rows' new TD errors;
- targets: a copy of the online weights every so many training env steps (or gradient
  steps, as batch RL counts), or Polyak averaging with ``target_update_rate < 1``;
- action masks (`coach.core.action_masks`): acting picks legal actions only (`QPolicy`),
  and every bootstrap's max or argmax runs over the legal next actions only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from gymnasium import spaces

from coach import validation as check
from coach.agents.acting import Policy, QPolicy, QValues
from coach.agents.agent import Agent
from coach.agents.algorithm import AlgorithmParameters
from coach.agents.learning import Clock, Learner, on_device, td_targets
from coach.agents.parameters import AgentParameters
from coach.core.action_masks import legal_only
from coach.core.run_phase import RunPhase
from coach.core.spaces import first_action
from coach.core.step_units import EnvironmentSteps, TrainingSteps
from coach.core.types import ActionInfo, Batch, Observation, Transition
from coach.errors import CoachError
from coach.exploration.e_greedy import EGreedyParameters
from coach.exploration.exploration_policy import ExplorationParameters
from coach.memories.experience_replay import ExperienceReplayParameters
from coach.memories.memory import MemoryParameters, TakesPriorities
from coach.memories.n_step import NStepAccumulator
from coach.networks.network_wrapper import NetworkWrapper
from coach.networks.parameters import NetworkParameters

LOSSES = ("huber", "mse")

EVALUATION_CHUNK = 8192
"""States per forward pass in `QAgent.evaluation_policy`."""


@dataclass(slots=True, kw_only=True)
class QLearningAlgorithmParameters(AlgorithmParameters):
    """What every Q-learning algorithm's parameters have (those of `QAgent` and `QLearner`):
    target syncs, the TD loss, n-step returns. How the bootstrap picks its next action is
    the algorithm's own: DQN's double Q-learning is `DQNAlgorithmParameters`'s, and the
    agents that bootstrap otherwise (NAF from V(s'), NEC from its dictionaries) have none."""

    num_steps_between_copying_online_weights_to_target: EnvironmentSteps | TrainingSteps = field(
        default_factory=lambda: EnvironmentSteps(500)
    )
    """Training env steps (or gradient steps, as batch RL counts) between two copies of the
    online weights into the target network."""
    target_update_rate: float = 1.0
    """How far each of those syncs moves the target towards the online weights: 1 copies
    them; a small rate synced every gradient step (0.005 with ``TrainingSteps(1)``) is
    Polyak averaging, a target that drifts instead of jumping. Syncs are made after each
    training round; the k that fell due in one move the target ``1 - (1 - rate)^k`` of the
    way."""
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
class DQNAlgorithmParameters(QLearningAlgorithmParameters):
    """The algorithm parameters of DQN and of the value-based agents that bootstrap from the
    max over the next actions, or with double Q-learning (`td_target`)."""

    double_q: bool = False
    """Bootstrap with double Q-learning (van Hasselt et al., 2016): the online network picks
    the next action, the target network values it."""


@dataclass(slots=True, kw_only=True)
class BatchDQNAlgorithmParameters(DQNAlgorithmParameters):
    """The parameters of the value agents made to learn from a dataset (BCQ, CQL): a batch
    run counts no env steps, so their target syncs count gradient steps; they bootstrap with
    double Q-learning."""

    num_steps_between_copying_online_weights_to_target: EnvironmentSteps | TrainingSteps = field(
        default_factory=lambda: TrainingSteps(100)
    )
    """Gradient steps between two copies of the online weights into the target network."""
    double_q: bool = True
    """Bootstrap with double Q-learning."""


# -- the pieces of an update ----------------------------------------------------------------


def regression_rows(
    q: torch.Tensor, target: torch.Tensor, loss: str, huber_delta: float
) -> torch.Tensor:
    """The loss of each row of ``q`` (B,) towards its ``target``: Huber or squared error."""
    if loss == "huber":
        return F.huber_loss(q, target, delta=huber_delta, reduction="none")
    return F.mse_loss(q, target, reduction="none")


def replay_mean(
    rows: torch.Tensor,
    td_errors: torch.Tensor,
    batch: Batch,
    priorities: TakesPriorities | None,
) -> torch.Tensor:
    """The loss of a sampled ``batch`` (in torch) from its rows (B,): their mean, weighted by
    a prioritized memory's importance weights; that memory (``priorities``, if the memory
    takes them) gets the rows' new TD errors."""
    if priorities is not None and batch.indices is not None:
        priorities.update_priorities(batch.indices.cpu().numpy(), td_errors.cpu().numpy())
    return (rows * batch.weights).mean() if batch.weights is not None else rows.mean()


def greedy_target_values(
    network: NetworkWrapper, q_values: QValues, next_states: dict[str, torch.Tensor]
) -> torch.Tensor:
    """``max_a' Q_target(s', a')`` over the legal next actions (every one without an action
    mask), (B,)."""
    return legal_only(q_values(network.target_predict(next_states)), next_states).max(dim=1).values


def double_q_target_values(
    network: NetworkWrapper,
    q_values: QValues,
    next_states: dict[str, torch.Tensor],
    allowed: Callable[[torch.Tensor, dict[str, torch.Tensor]], torch.Tensor] | None = None,
) -> torch.Tensor:
    """``Q_target(s', argmax_a' Q_online(s', a'))``, (B,); the argmax over the legal next
    actions (every one without an action mask), and over those ``allowed`` leaves (-inf for
    the others), when given."""
    online = legal_only(q_values(network(next_states)), next_states)
    if allowed is not None:
        online = allowed(online, next_states)
    best = online.argmax(dim=1, keepdim=True)
    return q_values(network.target_predict(next_states)).gather(1, best).squeeze(1)


def taken_q(learner: QLearner, b: Batch) -> tuple[torch.Tensor, torch.Tensor]:
    """Q(s, a) of a sampled batch's taken actions (B,), with gradients, and those actions as
    indices into the Q-values (B,) int64."""
    actions = b.actions if learner.action_offset == 0 else b.actions - learner.action_offset
    if actions.dtype != torch.int64:
        actions = actions.long()
    q = learner.action_values(learner.q_network(b.states)).gather(1, actions[:, None])
    return q.squeeze(1), actions


def td_target(learner: QLearner, b: Batch) -> torch.Tensor:
    """The (double, n-step) TD target of a sampled batch, (B,): double Q-learning where the
    learner's algorithm asks for it (`DQNAlgorithmParameters.double_q`), else the max over
    the next actions; call it without gradients."""
    algorithm = learner.algorithm
    double = isinstance(algorithm, DQNAlgorithmParameters) and algorithm.double_q
    bootstrap = double_q_target_values if double else greedy_target_values
    next_values = bootstrap(learner.q_network, learner.action_values, b.next_states)
    discount = b.extras.get("discount", algorithm.discount)  # g^k of n-step rows
    return td_targets(b.rewards, discount, b.terminated, next_values)


def regress_q(
    learner: QLearner, b: Batch, q: torch.Tensor, target: torch.Tensor
) -> dict[str, float | torch.Tensor]:
    """One gradient step of Q(s, a) (``q``) towards ``target``: the algorithm's loss per row,
    averaged (importance-weighted from a prioritized memory, which gets the new TD errors);
    the losses to log."""
    algorithm = learner.algorithm
    rows = regression_rows(q, target, algorithm.loss, algorithm.huber_delta)
    td_errors = (q - target).detach().abs()
    loss = replay_mean(rows, td_errors, b, learner.priorities)
    learner.q_network.train_step(loss)
    return {"q_loss": loss.detach(), "q_mean": q.detach().mean(), "td_error": td_errors.mean()}


# -- the family's shared parameters and agent -------------------------------------------------


@dataclass(slots=True, kw_only=True)
class QAgentParameters(AgentParameters):
    """What a value-based agent's parameters start from, the base of each algorithm's (DQN's,
    and CQL's, DDQN-BCQ's and NEC's, which are no variant of DQN): e-greedy exploration,
    uniform replay, one Q network (``main``) with a target copy. An algorithm changes what
    it does differently (its algorithm parameters, its networks)."""

    abstract: ClassVar[bool] = True

    algorithm: QLearningAlgorithmParameters = field(default_factory=QLearningAlgorithmParameters)
    """The algorithm's parameters."""
    exploration: ExplorationParameters | None = field(default_factory=EGreedyParameters)
    """Exploration (e-greedy by default; anything whose policy maps Q-values to actions)."""
    memory: MemoryParameters | None = field(default_factory=ExperienceReplayParameters)
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


class QAgent(Agent):
    """What every value-based agent does alike: act on Q-values through its exploration,
    store (n-step) transitions, evaluate its policy off-policy. Its algorithm is in the
    learner its subclass makes (`make_learner`).

    The Q network is ``main``; ``algorithm`` must be `QLearningAlgorithmParameters` (or
    derived: `DQNAlgorithmParameters`, ...).
    """

    accumulates_n_step: ClassVar[bool] = True
    """``n_step > 1`` sums rewards step by step in an `NStepAccumulator`; ``False`` for an
    agent that computes its n-step returns over whole episodes (NEC)."""

    def __init__(self, params: AgentParameters, *args: Any, **kwargs: Any) -> None:
        algorithm = params.algorithm
        if not isinstance(algorithm, QLearningAlgorithmParameters):
            raise CoachError(
                f"{type(self).__name__} takes QLearningAlgorithmParameters (or derived: "
                f"DQNAlgorithmParameters, ...), got "
                f"{type(algorithm).__name__}"
            )
        if params.exploration is None:
            raise CoachError(f"{type(self).__name__} needs an exploration policy")
        if "main" not in params.network_wrappers:
            raise CoachError(f"{type(self).__name__} needs a 'main' Q network")
        self.algorithm: QLearningAlgorithmParameters = algorithm
        super().__init__(params, *args, **kwargs)
        self.q_network = self.networks["main"]
        self.n_step = (
            NStepAccumulator(algorithm.n_step, algorithm.discount, self.num_envs)
            if algorithm.n_step > 1 and self.accumulates_n_step
            else None
        )

    def learner_arguments(self) -> dict[str, Any]:
        """`Agent.learner_arguments` and the family's: the algorithm, the Q-values of the
        network's outputs, and whether the network draws noise."""
        noisy = isinstance(self.policy, QPolicy) and self.policy.noisy
        return {
            **super().learner_arguments(),
            "algorithm": self.algorithm,
            "action_values": self.action_values,
            "noisy": noisy,
        }

    def memory_extras(self) -> dict[str, spaces.Space]:
        if self.algorithm.n_step > 1 and self.accumulates_n_step:  # each transition's own g^k
            return {"discount": spaces.Box(0.0, 1.0, shape=(), dtype=np.float32)}
        return {}

    # -- acting -----------------------------------------------------------------------------

    def action_values(self, outputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """Q-values (B, A) from the network's outputs (the expectation, for distributions)."""
        return outputs["q"]

    def make_policy(self) -> Policy:
        return QPolicy(self.networks["main"], self.action_values, **self.policy_arguments())

    def evaluation_policy(self, states: Observation) -> tuple[np.ndarray, np.ndarray]:
        """For off-policy evaluation: Q(s, .) and the probability of every action under the
        policy this agent is evaluated with, for a whole dataset's states, (N, A) each."""
        if self.q_network.recurrent:
            raise CoachError(
                f"{type(self).__name__} has a recurrent Q network: its values depend on each "
                f"episode's history, which off-policy evaluation of single states does not give"
            )
        count = len(next(iter(states.values())))
        q_parts = []
        probability_parts = []
        policy = self.policy
        exploration = self.exploration
        assert isinstance(policy, QPolicy) and exploration is not None
        with torch.no_grad():
            for start in range(0, count, EVALUATION_CHUNK):
                inputs = policy.tensors(
                    {k: v[start : start + EVALUATION_CHUNK] for k, v in states.items()}
                )
                q = self.action_values(self.q_network(inputs))
                acting = policy.values(inputs).cpu().numpy()
                q_parts.append(q.cpu().numpy())
                probability_parts.append(
                    exploration.action_probabilities(acting, RunPhase.EVALUATE)
                )
        return np.concatenate(q_parts).astype(np.float64), np.concatenate(probability_parts)

    # -- storing ----------------------------------------------------------------------------

    def store(self, step: Transition, info: ActionInfo, rows: np.ndarray | None = None) -> None:
        if self.n_step is None:
            super().store(step, info, rows)
            return
        ready = self.n_step.add(step, rows)
        if ready is not None and self.memory is not None:
            self.memory.store(ready)

    def end_episodes(self) -> None:
        # The episodes stop here: the steps waiting for their n-step return leave now.
        if self.n_step is not None and self.memory is not None:
            ready = self.n_step.flush()
            if ready is not None:
                self.memory.store(ready)
        super().end_episodes()

    # -- checkpoints ------------------------------------------------------------------------

    def state_dict(self, include_memory: bool = False) -> dict[str, Any]:
        state = super().state_dict(include_memory)
        state["n_step"] = self.n_step.state_dict() if self.n_step is not None else None
        return state

    def load_state_dict(self, state: dict[str, Any], episodes_in_flight: bool = True) -> None:
        super().load_state_dict(state, episodes_in_flight)
        if self.n_step is not None and state.get("n_step") is not None and episodes_in_flight:
            self.n_step.load_state_dict(state["n_step"])


class QLearner(Learner):
    """What every value-based learner shares: the Q network (``main``), its outputs'
    Q-values, new noise for noisy networks before each step (`sampled`), and the target
    syncs after each round (`end_round`). The algorithm's update is the subclass's `learn`.

    Args:
        algorithm: The algorithm's parameters.
        action_values: Q-values (B, A) from the Q network's outputs.
        noisy: The Q network has noisy layers.
        **kwargs: `Learner`'s arguments.
    """

    def __init__(
        self,
        algorithm: QLearningAlgorithmParameters,
        action_values: QValues,
        noisy: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.algorithm = algorithm
        self.q_network = self.networks["main"]
        self.action_values = action_values
        self.noisy = noisy
        self.action_offset = first_action(self.action_space)
        self.target_syncs = 0
        """Target syncs so far."""
        memory = self.memory
        self.priorities: TakesPriorities | None = (
            memory if isinstance(memory, TakesPriorities) else None
        )
        """The memory, if it takes new priorities (checked once: a Protocol's isinstance
        costs tens of microseconds, too much for every gradient step)."""

    def sampled(self, batch: Batch) -> Batch:
        """A sampled batch on the learner's device, with new noise drawn for noisy networks
        (online and target) first."""
        if self.noisy:
            self.q_network.online.reset_noise(self.torch_generator)
            if self.q_network.target is not None:
                self.q_network.target.reset_noise(self.torch_generator)
        return on_device(batch, self.device)

    def end_round(self, clock: Clock) -> None:
        period = self.algorithm.num_steps_between_copying_online_weights_to_target
        now = (
            clock.training_steps if isinstance(period, TrainingSteps) else clock.training_env_steps
        )
        due = now // max(period.num_steps, 1)
        if due > self.target_syncs:
            # Several syncs fall due in a round of several steps: k moves of `rate` in a row
            # take the target 1 - (1 - rate)^k of the way (a copy stays a copy).
            rate = 1.0 - (1.0 - self.algorithm.target_update_rate) ** (due - self.target_syncs)
            self.q_network.update_target(rate)
            self.target_syncs = int(due)

    def state_dict(self) -> dict[str, Any]:
        return {"target_syncs": self.target_syncs}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.target_syncs = int(state["target_syncs"])
