"""On-policy rollouts: a T x B block (time x environment copies), and GAE over it.

An on-policy agent fills the block with ``T`` steps of its ``B`` env copies, then computes
returns and advantages for the whole block at once and learns from it in minibatches. The
value a step bootstraps from is V(s_{t+1}) of its true successor: the next row's value while
the episode goes on, the value of the final observation where the episode was truncated
(a time limit is not the end of the task), and nothing where it terminated.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from coach import validation as check
from coach.core.types import Batch, Transition
from coach.errors import CoachError
from coach.memories.memory import Memory


def generalized_advantages(
    rewards: np.ndarray,
    values: np.ndarray,
    next_values: np.ndarray,
    terminated: np.ndarray,
    truncated: np.ndarray,
    discount: float,
    gae_lambda: float,
) -> tuple[np.ndarray, np.ndarray]:
    """GAE(lambda) advantages and the matching returns (Schulman et al., 2016).

    Args:
        rewards: (T, B) rewards.
        values: (T, B) V(s_t).
        next_values: (T, B) V(s_{t+1}) of each step's true successor (the final observation's
            value where the episode ended).
        terminated: (T, B) the step ended the episode in a terminal state (no bootstrap).
        truncated: (T, B) the step's episode was cut (bootstrap, but the trace stops).
        discount: gamma.
        gae_lambda: lambda; 1 gives Monte Carlo advantages, 0 one-step TD errors.

    Returns:
        ``(advantages, returns)``, each (T, B), with ``returns = advantages + values``.
    """
    not_terminal = 1.0 - terminated.astype(np.float64)
    continues = 1.0 - (terminated | truncated).astype(np.float64)
    deltas = rewards + discount * not_terminal * next_values - values
    advantages = np.zeros_like(deltas, dtype=np.float64)
    running = np.zeros(deltas.shape[1], dtype=np.float64)
    for t in range(len(deltas) - 1, -1, -1):  # vectorized over the env copies
        running = deltas[t] + discount * gae_lambda * continues[t] * running
        advantages[t] = running
    return advantages, advantages + values


@dataclass(slots=True, kw_only=True)
class RolloutParameters:
    """An on-policy rollout block."""

    rollout_length: int = 2048
    """Steps per env copy in one block (T)."""

    def validate(self) -> None:
        check.whole("rollout_length", self.rollout_length, 1)

    def build(
        self,
        observation_space: spaces.Dict,
        action_space: spaces.Space[Any],
        rng: np.random.Generator,
        extra_spaces: dict[str, spaces.Space[Any]] | None = None,
    ) -> Rollout:
        """A rollout block for the agent's spaces; minibatches are shuffled with ``rng``."""
        return Rollout(self.rollout_length, observation_space, action_space, rng, extra_spaces)


class Rollout(Memory):
    """A T x B block of steps, filled in time order, used once and cleared.

    The env count B is taken from the first `store`. ``extra_spaces`` name per-step columns
    the agent keeps (``value`` and ``log_prob`` for the policy-gradient family).

    Args:
        length: T, the steps per env copy.
        observation_space: The agent's observation space.
        action_space: The agent's action space.
        rng: Shuffles the minibatches.
        extra_spaces: Further per-step columns by name.
    """

    per_copy_state = True

    def __init__(
        self,
        length: int,
        observation_space: spaces.Dict,
        action_space: spaces.Space[Any],
        rng: np.random.Generator,
        extra_spaces: dict[str, spaces.Space[Any]] | None = None,
    ) -> None:
        if length < 1:
            raise CoachError(f"a rollout needs at least one step, got {length}")
        self.length = length
        self.rng = rng
        self.observation_space = observation_space
        self.action_space = action_space
        self.extra_spaces = dict(extra_spaces or {})
        self.columns: dict[str, Any] = {}
        self.num_envs = 0
        self.steps = 0
        self.advantages: np.ndarray | None = None
        self.returns: np.ndarray | None = None

    def _allocate(self, num_envs: int) -> None:
        def column(space: spaces.Space[Any]) -> np.ndarray:
            return np.zeros((self.length, num_envs, *(space.shape or ())), dtype=space.dtype)

        obs = self.observation_space.spaces
        self.columns = {
            "states": {k: column(s) for k, s in obs.items()},
            "next_states": {k: column(s) for k, s in obs.items()},
            "actions": column(self.action_space),
            "rewards": np.zeros((self.length, num_envs), dtype=np.float32),
            "terminated": np.zeros((self.length, num_envs), dtype=bool),
            "truncated": np.zeros((self.length, num_envs), dtype=bool),
            "extras": {k: column(s) for k, s in self.extra_spaces.items()},
        }
        self.num_envs = num_envs

    @property
    def full(self) -> bool:
        return self.steps == self.length

    def __len__(self) -> int:
        return self.steps * self.num_envs

    def store(self, transition: Transition) -> None:
        count = len(transition)
        if not self.columns:
            self._allocate(count)
        if count != self.num_envs:
            raise CoachError(f"this rollout holds {self.num_envs} envs, got a step of {count}")
        if self.full:
            raise CoachError("the rollout is full: learn from it and clear it first")
        extras = transition.extras
        if set(extras) != set(self.extra_spaces):
            raise CoachError(
                f"this rollout stores the columns {sorted(self.extra_spaces)} with each step, "
                f"got {sorted(extras)}"
            )
        t, c = self.steps, self.columns
        for key in c["states"]:
            c["states"][key][t] = transition.state[key]
            c["next_states"][key][t] = transition.next_state[key]
        c["actions"][t] = transition.action
        c["rewards"][t] = transition.reward
        c["terminated"][t] = transition.terminated
        c["truncated"][t] = transition.truncated
        for key, column in c["extras"].items():
            column[t] = extras[key]
        self.steps += 1

    def compute_advantages(
        self,
        values: np.ndarray,
        last_values: np.ndarray,
        final_values: np.ndarray,
        discount: float,
        gae_lambda: float,
    ) -> None:
        """GAE over the block.

        Args:
            values: (T, B) V(s_t) of the stored states.
            last_values: (B,) V of the states after the block's last step.
            final_values: (T, B) V(next_state) of the stored next states; only the rows of
                truncated steps are read (pass zeros where no step was truncated).
            discount: gamma.
            gae_lambda: lambda.
        """
        if not self.full:
            raise CoachError(f"GAE runs on a full block ({self.steps} of {self.length} steps)")
        c = self.columns
        next_values = np.concatenate([values[1:], last_values[None]], axis=0)
        next_values = np.where(c["truncated"], final_values, next_values)
        self.advantages, self.returns = generalized_advantages(
            c["rewards"], values, next_values, c["terminated"], c["truncated"], discount,
            gae_lambda,
        )  # fmt: skip

    def _rows(self, indices: np.ndarray, first_only: Collection[str] = ()) -> Batch:
        """The block rows ``indices`` (any shape); the extras ``first_only`` names are taken
        at the first row of each column of ``indices`` only (a sequence's first step)."""
        c = self.columns
        t, b = np.divmod(indices, self.num_envs)
        extras = {
            k: (v[t[0], b[0]] if k in first_only else v[t, b]) for k, v in c["extras"].items()
        }
        if self.advantages is not None and self.returns is not None:
            extras["advantages"] = self.advantages[t, b].astype(np.float32)
            extras["returns"] = self.returns[t, b].astype(np.float32)
        return Batch(
            states={k: v[t, b] for k, v in c["states"].items()},
            actions=c["actions"][t, b],
            rewards=c["rewards"][t, b],
            next_states={k: v[t, b] for k, v in c["next_states"].items()},
            terminated=c["terminated"][t, b],
            truncated=c["truncated"][t, b],
            indices=indices,
            extras=extras,
        )

    def sample(self, batch_size: int) -> Batch:
        """``batch_size`` steps drawn at random from the block (with replacement)."""
        if self.steps == 0:
            raise CoachError("cannot sample from an empty rollout")
        return self._rows(self.rng.integers(0, len(self), size=batch_size))

    def minibatches(self, batch_size: int) -> Iterator[Batch]:
        """One epoch over the block: every step once, shuffled, in minibatches."""
        order = self.rng.permutation(len(self))
        for start in range(0, len(order), batch_size):
            yield self._rows(order[start : start + batch_size])

    def sequence_minibatches(
        self, length: int, batch_size: int, first_only: Collection[str] = ()
    ) -> Iterator[Batch]:
        """One epoch over the block in sequences, for recurrent networks: each env copy's
        column of the block cut into sequences of ``length`` consecutive steps, shuffled,
        ``batch_size // length`` of them per minibatch (at least one). The fields are
        time-major, (length, sequences, ...), and ``indices`` holds the block rows; the
        extras ``first_only`` names are each sequence's first step's, (sequences, ...) (the
        hidden states a learner unrolls from).
        """
        if self.length % length:
            raise CoachError(
                f"sequences of {length} steps do not tile a block of {self.length} steps"
            )
        count = self.length // length * self.num_envs
        order = self.rng.permutation(count)
        per_batch = max(1, batch_size // length)
        offsets = np.arange(length)[:, None]
        for start in range(0, count, per_batch):
            piece, env = np.divmod(order[start : start + per_batch], self.num_envs)
            steps = piece[None] * length + offsets
            yield self._rows(steps * self.num_envs + env[None], first_only)

    def state_dict(self) -> dict[str, Any]:
        """The steps stored so far in the block (a checkpoint mid-block resumes exactly)."""
        t = self.steps
        c = self.columns
        if not c:
            return {"steps": 0, "num_envs": 0}
        return {
            "steps": t,
            "num_envs": self.num_envs,
            "states": {k: v[:t].copy() for k, v in c["states"].items()},
            "next_states": {k: v[:t].copy() for k, v in c["next_states"].items()},
            "actions": c["actions"][:t].copy(),
            "rewards": c["rewards"][:t].copy(),
            "terminated": c["terminated"][:t].copy(),
            "truncated": c["truncated"][:t].copy(),
            "extras": {k: v[:t].copy() for k, v in c["extras"].items()},
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.clear()
        if not state["num_envs"]:
            return
        self._allocate(int(state["num_envs"]))
        t, c = int(state["steps"]), self.columns
        for name in ("states", "next_states", "extras"):
            for key, column in c[name].items():
                column[:t] = state[name][key]
        for name in ("actions", "rewards", "terminated", "truncated"):
            c[name][:t] = state[name]
        self.steps = t

    def clear(self) -> None:
        self.steps = 0
        self.advantages = self.returns = None
