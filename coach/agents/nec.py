"""Neural Episodic Control (Pritzel, Uria, Srinivasan, Puigdomènech, Vinyals, Hassabis,
Wierstra and Blundell, "Neural Episodic Control", ICML 2017).

A network maps a state to a key; each action has a differentiable neural dictionary
(`coach.memories.dnd`) of keys and values, and Q(s, a) is the inverse-distance-kernel
average of the values of the key's nearest neighbours in action a's dictionary.

- When an episode ends (or is cut), its steps get their n-step returns
  ``G_t = r_t + ... + g^(n-1) r_(t+n-1) + g^n max_b Q(s_(t+n), b)`` (the rewards to the end
  where the episode ends sooner, bootstrapped from the state after the last step where it
  was cut rather than terminated), the bootstraps looked up in the dictionaries as they are
  then. Each step's key (the network's, at that moment) and return enter the dictionary of
  its action, an existing key's value moving towards the return by
  ``new_value_shift_coefficient``; the steps and their returns enter the replay memory.
- A gradient step regresses Q(s, a) of a replayed batch on those returns, end to end: the
  loss reaches the network through the keys it computes, and the dictionary entries that
  answered the lookup through their keys and values (plain SGD at ``dnd_learning_rate``).
- There is no target network: the dictionary plays its part. Training waits until every
  action's dictionary holds ``number_of_knn`` entries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import torch
from gymnasium import spaces

from coach import validation as check
from coach.agents.acting import Policy
from coach.agents.held import HoldsEpisodes
from coach.agents.learning import Clock, Learner
from coach.agents.q_learning import (
    QAgent,
    QAgentParameters,
    QLearner,
    QLearningAlgorithmParameters,
    regress_q,
)
from coach.core.action_masks import ACTION_MASK, legal_only
from coach.core.run_phase import RunPhase
from coach.core.spaces import first_action
from coach.core.step_units import EnvironmentSteps
from coach.core.types import Batch, Transition
from coach.errors import CoachError
from coach.memories.dnd import DND
from coach.memories.held_episodes import HeldEpisodes
from coach.networks.heads import KeyHeadParameters
from coach.networks.parameters import NetworkParameters

NEC_RETURN = "nec_return"
"""The extra column holding a step's bootstrapped n-step return."""

INDEXES = ("exact", "approximate", "auto")
"""How the dictionaries search for neighbours (`NECAlgorithmParameters.dnd_index`)."""

CHUNK = 4096
"""States per forward pass when an episode's keys are computed."""


@dataclass(slots=True, kw_only=True)
class NECAlgorithmParameters(QLearningAlgorithmParameters):
    """NEC's parameters (the paper's and the original Coach's names and defaults)."""

    n_step: int = 100
    """Rewards summed before bootstrapping from the dictionaries."""
    loss: str = "mse"
    """The regression loss of Q(s, a) on the returns: ``mse`` (the paper's) or ``huber``."""
    num_consecutive_playing_steps: EnvironmentSteps = field(
        default_factory=lambda: EnvironmentSteps(4)
    )
    """Env steps between two training rounds."""
    dnd_size: int = 500_000
    """Entries each action's dictionary holds before the least recently used give way."""
    number_of_knn: int = 50
    """Neighbours a lookup averages (k)."""
    l2_norm_added_delta: float = 1e-3
    """The kernel's delta: ``w_i = 1 / (||h - h_i||^2 + delta)``."""
    new_value_shift_coefficient: float = 0.1
    """How far a key already present moves its value towards a new return (the paper's
    tabular learning rate alpha)."""
    dnd_key_error_threshold: float = 0.0
    """A new key within this squared distance of a stored one is that key (0: only an exact
    match)."""
    propagate_updates_to_dnd: bool = True
    """The loss's gradients also move the keys and values that answered the lookup."""
    dnd_learning_rate: float = 1e-2
    """The SGD step size of those keys and values."""
    dnd_index: str = "auto"
    """``exact``: every search compares with every key; ``approximate``: a faiss inverted-file
    index; ``auto``: exact until a dictionary holds ``dnd_approximate_from`` entries."""
    dnd_approximate_from: int = 20_000
    """Where ``auto`` turns to the approximate index."""

    def validate(self) -> None:
        QLearningAlgorithmParameters.validate(self)
        check.whole("dnd_size", self.dnd_size, 1)
        check.whole("number_of_knn", self.number_of_knn, 1)
        check.number("l2_norm_added_delta", self.l2_norm_added_delta, 0, low_open=True)
        check.number("new_value_shift_coefficient", self.new_value_shift_coefficient, 0, 1)
        check.number("dnd_key_error_threshold", self.dnd_key_error_threshold, 0)
        check.number("dnd_learning_rate", self.dnd_learning_rate, 0)
        check.one_of("dnd_index", self.dnd_index, INDEXES)
        check.whole("dnd_approximate_from", self.dnd_approximate_from, 1)
        if self.number_of_knn > self.dnd_size:
            raise check.InvalidParameter(
                "number_of_knn", f"must not exceed dnd_size ({self.dnd_size})", self.number_of_knn
            )


def nec_network() -> NetworkParameters:
    """NEC's network: an MLP over the observation to a key of 64 numbers, no target copy."""
    return NetworkParameters(heads=[KeyHeadParameters()])


@dataclass(slots=True, kw_only=True)
class NECAgentParameters(QAgentParameters):
    """An NEC agent: e-greedy over the dictionaries' Q-values, a replay of steps with their
    returns, the key network ``main``."""

    algorithm: NECAlgorithmParameters = field(default_factory=NECAlgorithmParameters)
    """The algorithm's parameters."""
    network_wrappers: dict[str, NetworkParameters] = field(
        default_factory=lambda: {"main": nec_network()}
    )
    """The key network (``main``): a `KeyHeadParameters` head named ``key``."""

    def validate(self) -> None:
        QAgentParameters.validate(self)
        heads = self.network_wrappers["main"].heads
        if not any(isinstance(h, KeyHeadParameters) and h.name == "key" for h in heads):
            raise check.InvalidParameter(
                "network_wrappers['main'].heads",
                "NEC's network needs a KeyHeadParameters() head named 'key'",
                [type(h).__name__ for h in heads],
            )

    def agent_class(self) -> type[QAgent]:
        return NECAgent


def n_step_returns(
    rewards: np.ndarray, bootstraps: np.ndarray, discount: float, n: int, final: float
) -> np.ndarray:
    """Each step's n-step return over one episode (float32, computed in float64).

    Args:
        rewards: The episode's rewards, (T,).
        bootstraps: ``max_b Q(s_t, b)`` of its states, (T,): ``bootstraps[t + n]`` ends step
            t's return where the episode runs that long.
        discount: The discount.
        n: The steps summed before bootstrapping.
        final: The value after the last step: 0 where the episode terminated, the state's
            value where it was cut.
    """
    length = len(rewards)
    rewards = np.asarray(rewards, dtype=np.float64)
    returns = np.zeros(length, dtype=np.float64)
    for i in range(min(n, length)):
        returns[: length - i] += discount**i * rewards[i:]
    steps = np.arange(length)
    inside = steps + n < length
    returns[inside] += discount**n * np.asarray(bootstraps, np.float64)[steps[inside] + n]
    returns[~inside] += discount ** (length - steps[~inside]) * final
    return returns.astype(np.float32)


class NECAgent(HoldsEpisodes, QAgent):
    """Neural Episodic Control: Q-values looked up in a dictionary per action."""

    not_on_workers: ClassVar[str | None] = (
        "its dictionaries are filled from the episodes the agent acts itself, and a learner "
        "takes its workers' episodes into its replay alone; it learns nothing there"
    )

    params: NECAgentParameters
    algorithm: NECAlgorithmParameters
    accumulates_n_step = False  # the returns are computed over whole episodes

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.episodes_held = HeldEpisodes(self.num_envs, self._finish)
        """Each copy's open episode, until it ends."""

    # -- the dictionaries -------------------------------------------------------------------

    def make_policy(self) -> Policy:
        # The dictionaries are the acting side's values: built first, beside the network.
        algorithm = self.algorithm
        assert isinstance(self.action_space, spaces.Discrete)
        self.dnd = DND(
            num_actions=int(self.action_space.n),
            key_size=self._key_size(),
            capacity=algorithm.dnd_size,
            num_neighbors=algorithm.number_of_knn,
            delta=algorithm.l2_norm_added_delta,
            value_shift=algorithm.new_value_shift_coefficient,
            key_error_threshold=algorithm.dnd_key_error_threshold,
            index=algorithm.dnd_index,
            approximate_from=algorithm.dnd_approximate_from,
            device=self.device,
            seed=int(self.rng.integers(2**31)),
        )
        policy = super().make_policy()
        policy.not_exportable = (
            "its Q-values are nearest-neighbour searches in its dictionaries, which an "
            "exported network does not hold"
        )
        return policy

    def _key_size(self) -> int:
        head = next(h for h in self.params.network_wrappers["main"].heads if h.name == "key")
        assert isinstance(head, KeyHeadParameters)
        if head.size is not None:
            return head.size
        zeros = {
            key: torch.zeros((1, *(space.shape or ())), device=self.device)
            for key, space in self.observation_space.spaces.items()
        }
        with torch.no_grad():
            return int(self.networks["main"](zeros)["key"].shape[-1])

    def action_values(self, outputs: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.dnd.q_values(outputs["key"])

    def learner_arguments(self) -> dict[str, Any]:
        return {**super().learner_arguments(), "dnd": self.dnd}

    def make_learner(self) -> Learner:
        return NECLearner(**self.learner_arguments())

    def memory_extras(self) -> dict[str, spaces.Space]:
        return {NEC_RETURN: spaces.Box(-np.inf, np.inf, shape=(), dtype=np.float32)}

    # -- storing: a whole episode at a time (`HoldsEpisodes`) ------------------------------

    def _finish(self, episode: Transition) -> dict[str, np.ndarray]:
        """An ended episode's returns; its keys and returns enter the dictionaries."""
        network = self.networks["main"]
        algorithm = self.algorithm
        length = len(episode.reward)
        with torch.no_grad():
            keys = torch.cat(
                [
                    network(self.policy.tensors(_rows(episode.state, start, CHUNK)))["key"]
                    for start in range(0, length, CHUNK)
                ]
            )
            bootstraps = self._values(keys, _masks(episode.state, 0, length))
            final = 0.0
            if not bool(episode.terminated[-1]):
                last = self.policy.tensors(_rows(episode.next_state, length - 1, 1))
                final = float(self._values(network(last)["key"], last)[0])
        returns = n_step_returns(
            episode.reward, bootstraps, algorithm.discount, algorithm.n_step, final
        )
        actions = torch.as_tensor(np.asarray(episode.action, dtype=np.int64), device=self.device)
        offset = first_action(self.action_space)
        self.dnd.add(keys, actions - offset, torch.as_tensor(returns, device=self.device))
        return {NEC_RETURN: returns}

    def _values(self, keys: torch.Tensor, states: dict[str, Any]) -> np.ndarray:
        """``max_b Q(s, b)`` over the legal actions (where ``states`` carry an action mask),
        from the states' keys."""
        masks = {
            k: torch.as_tensor(v, device=self.device) for k, v in states.items() if k == ACTION_MASK
        }
        return legal_only(self.dnd.q_values(keys), masks).max(dim=1).values.cpu().numpy()

    # -- training ---------------------------------------------------------------------------

    def train(self) -> int:
        if self.phase is RunPhase.TRAIN and min(self.dnd.sizes) < self.algorithm.number_of_knn:
            # Until every dictionary can answer with k neighbours, the rounds due are skipped.
            period = self.algorithm.num_consecutive_playing_steps.num_steps
            self.training_rounds = self.training_env_steps // period
            return 0
        return super().train()

    # -- checkpoints ------------------------------------------------------------------------

    def state_dict(self, include_memory: bool = False) -> dict[str, Any]:
        # The dictionaries are the model (a policy acts on them), saved in every checkpoint.
        return {
            **super().state_dict(include_memory),
            "dnd": self.dnd.state_dict(),
        }

    def load_state_dict(self, state: dict[str, Any], episodes_in_flight: bool = True) -> None:
        if "dnd" not in state:
            raise CoachError("the checkpoint has no NEC dictionaries: it is not an NEC agent's")
        super().load_state_dict(state, episodes_in_flight)
        self.dnd.load_state_dict(state["dnd"])


def _masks(state: dict[str, np.ndarray], start: int, count: int) -> dict[str, np.ndarray]:
    return {ACTION_MASK: state[ACTION_MASK][start : start + count]} if ACTION_MASK in state else {}


def _rows(state: dict[str, np.ndarray], start: int, count: int) -> dict[str, np.ndarray]:
    return {key: value[start : start + count] for key, value in state.items()}


class NECLearner(QLearner):
    """NEC's update: Q(s, a) from the dictionary of a, regressed on the step's return, the
    gradients reaching the network and the entries looked up.

    Args:
        dnd: The agent's dictionaries.
        **kwargs: `QLearner`'s arguments.
    """

    algorithm: NECAlgorithmParameters

    def __init__(self, dnd: DND, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.dnd = dnd

    def learn(self, batch: Batch) -> dict[str, float | torch.Tensor]:
        b = self.sampled(batch)
        actions = b.actions if self.action_offset == 0 else b.actions - self.action_offset
        keys = self.q_network(b.states)["key"]
        q, lookup = self.dnd.lookup_taken(keys, actions.long())
        losses = regress_q(self, b, q, b.extras[NEC_RETURN])
        if self.algorithm.propagate_updates_to_dnd:
            self.dnd.apply_gradients(lookup, self.algorithm.dnd_learning_rate)
        return losses

    def end_round(self, clock: Clock) -> None:
        """No target network to sync."""


__all__ = [
    "NECAgent",
    "NECAgentParameters",
    "NECAlgorithmParameters",
    "NECLearner",
    "n_step_returns",
    "nec_network",
]
