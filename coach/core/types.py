"""The records that flow between environments, agents and memories.

Observations are dictionaries of arrays keyed by name. Everything that crosses the
environment boundary is batched over the environment copies: a single environment is a batch
of one. ``terminated`` and ``truncated`` stay apart everywhere, because a time-limit
truncation still bootstraps from the next state's value and a termination does not.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

Observation = dict[str, np.ndarray]
"""A batch of observations: one array per observation key, the leading axis over envs."""


@dataclass(slots=True)
class Transition:
    """Steps of a batch of environment copies, as a memory stores them: every field has a
    leading axis over the rows (B,).

    This is the one record that `Memory.store` takes, whoever writes it: an agent storing
    the step it just observed, an n-step accumulator, a hindsight memory storing relabeled
    copies, a rollout worker's block arriving at the learner.
    """

    state: dict[str, np.ndarray]
    """The observations the actions were taken in, keyed by name, (B, ...) each."""
    action: np.ndarray
    """The actions, ``(B, *action_shape)``."""
    reward: np.ndarray
    """The rewards, (B,)."""
    next_state: dict[str, np.ndarray]
    """The observations the steps led to (the final one where an episode ended)."""
    terminated: np.ndarray
    """The episode ended in a terminal state: nothing to bootstrap from, (B,) bool."""
    truncated: np.ndarray
    """The episode was cut (a time limit): the next state's value still counts, (B,) bool."""
    extras: dict[str, np.ndarray] = field(default_factory=dict)
    """Further named columns (log-probabilities, values, n-step discounts, masks), (B, ...)."""

    def __len__(self) -> int:
        return len(self.reward)

    @property
    def done(self) -> np.ndarray:
        """Whether each row's episode ended, either way, (B,)."""
        return np.asarray(self.terminated, dtype=bool) | np.asarray(self.truncated, dtype=bool)

    @classmethod
    def single(
        cls,
        state: dict[str, Any],
        action: Any,
        reward: float,
        next_state: dict[str, Any],
        terminated: bool,
        truncated: bool,
        extras: dict[str, Any] | None = None,
    ) -> Transition:
        """One step of one environment, as a user writes it down: a batch of one."""
        return cls(
            state={k: np.asarray(v)[None] for k, v in state.items()},
            action=np.asarray(action)[None],
            reward=np.asarray([reward], dtype=np.float32),
            next_state={k: np.asarray(v)[None] for k, v in next_state.items()},
            terminated=np.asarray([terminated], dtype=bool),
            truncated=np.asarray([truncated], dtype=bool),
            extras={k: np.asarray(v)[None] for k, v in (extras or {}).items()},
        )

    @classmethod
    def concatenate(cls, parts: Sequence[Transition]) -> Transition:
        """The rows of ``parts`` one after another (the copies of several workers side by
        side); they have the same observation keys and extras."""
        first = parts[0]
        return cls(
            state={k: np.concatenate([p.state[k] for p in parts]) for k in first.state},
            action=np.concatenate([p.action for p in parts]),
            reward=np.concatenate([p.reward for p in parts]),
            next_state={k: np.concatenate([p.next_state[k] for p in parts]) for k in first.state},
            terminated=np.concatenate([p.terminated for p in parts]),
            truncated=np.concatenate([p.truncated for p in parts]),
            extras={k: np.concatenate([p.extras[k] for p in parts]) for k in first.extras},
        )

    def rows(self, index: Any) -> Transition:
        """The rows ``index`` selects (an index array, a mask or a slice)."""
        return Transition(
            state={k: v[index] for k, v in self.state.items()},
            action=self.action[index],
            reward=self.reward[index],
            next_state={k: v[index] for k, v in self.next_state.items()},
            terminated=self.terminated[index],
            truncated=self.truncated[index],
            extras={k: v[index] for k, v in self.extras.items()},
        )


@dataclass(slots=True)
class EnvResponse:
    """An environment's answer to a reset or a step, batched over its copies.

    Episode boundaries are data, carried per copy by three flags: ``terminated`` and
    ``truncated`` say that the step ended the copy's episode (``next_observation`` is then the
    finished episode's last observation, what to learn from), and ``episode_started`` says
    that ``observation`` is the first observation of a new episode (what to act on next).
    After a step the two agree (gymnasium's SAME_STEP autoreset: a copy whose episode ended
    is reset at once); after a reset every copy starts. Where a copy did not start a new
    episode, its ``observation`` and ``next_observation`` hold the same values.

    Nothing may be inferred from which objects the arrays are: an environment may return one
    dictionary for both, fresh copies, or one buffer it overwrites in its next step. Whoever
    keeps a response's arrays past the environment's next call copies them.
    """

    observation: Observation
    """What to act on next, per env."""
    reward: np.ndarray
    """The reward of the step, shape (B,)."""
    terminated: np.ndarray
    """Episode reached a terminal state, shape (B,), bool."""
    truncated: np.ndarray
    """Episode was cut short (time limit), shape (B,), bool."""
    next_observation: Observation
    """The successor of the step's state: the final observation where an episode ended."""
    episode_return: np.ndarray
    """Undiscounted return of each env's episode up to and including this step."""
    episode_length: np.ndarray
    """Length of each env's episode up to and including this step."""
    infos: list[dict[str, Any]] = field(default_factory=list)
    """The environment's info dictionary for each env (may be empty)."""
    episode_started: np.ndarray = None  # type: ignore[assignment] # set in __post_init__
    """``observation`` starts a new episode, shape (B,), bool. Left out, it is where the step
    ended an episode (``terminated | truncated``): the autoreset of a step."""

    def __post_init__(self) -> None:
        if self.episode_started is None:  # left out: the autoreset of a step
            self.episode_started = np.asarray(  # type: ignore[unreachable]
                self.terminated, dtype=bool
            ) | np.asarray(self.truncated, dtype=bool)

    @classmethod
    def first(
        cls, observation: Observation, num_envs: int, infos: list[dict[str, Any]] | None = None
    ) -> EnvResponse:
        """The response of a reset: new episodes start at ``observation`` in every env."""
        return cls(
            observation=observation,
            reward=np.zeros(num_envs, dtype=np.float32),
            terminated=np.zeros(num_envs, dtype=bool),
            truncated=np.zeros(num_envs, dtype=bool),
            next_observation=observation,
            episode_return=np.zeros(num_envs),
            episode_length=np.zeros(num_envs, dtype=np.int64),
            infos=infos if infos is not None else [],
            episode_started=np.ones(num_envs, dtype=bool),
        )

    @property
    def done(self) -> np.ndarray:
        """Episode ended, either way, shape (B,)."""
        return self.terminated | self.truncated

    @property
    def num_envs(self) -> int:
        return len(self.reward)


def any_set(flags: np.ndarray) -> bool:
    """Whether any flag of a bool array (B,) is set: what ``flags.any()`` says, at a tenth of
    its cost, for the checks every step makes (a set flag is a nonzero byte)."""
    return any(flags.tobytes())


@dataclass(slots=True)
class ActionInfo:
    """What an agent decided for a batch of observations: the record that carries a step's
    values from acting to storing (nothing travels in the agent's private attributes)."""

    action: np.ndarray
    """The agent's action per env, in its own action space, shape ``(B, *action_shape)``."""
    action_values: np.ndarray | None = None
    """Values behind the choice where the agent has them (Q-values, shape (B, A))."""
    log_prob: np.ndarray | None = None
    """Log-probability of the action under the acting policy, where it has one."""
    extras: dict[str, np.ndarray] = field(default_factory=dict)
    """What the acting side tells others about the choice: the behaviour's probability of
    every action (``action_probabilities``, when a dataset is recorded), a subgoal test for
    the levels below (``subgoal_test``)."""
    memory_extras: dict[str, np.ndarray] = field(default_factory=dict)
    """Columns stored with the step (`Transition.extras`): an on-policy agent's
    log-probability and value of the action, for instance."""
    env_action: np.ndarray | None = None
    """The action in the environment's terms (after the agent's output filter), set by
    `Agent.act`."""


@dataclass(slots=True)
class Batch:
    """Stacked transitions, as a memory samples them: named fields, never tuples by position."""

    states: dict[str, Any]
    """Observations per key, shape (N, ...)."""
    actions: Any
    """Actions, shape ``(N, *action_shape)``."""
    rewards: Any
    """Rewards, shape (N,)."""
    next_states: dict[str, Any]
    """Successor observations per key, shape (N, ...)."""
    terminated: Any
    """Terminal flags, shape (N,)."""
    truncated: Any
    """Truncation flags, shape (N,)."""
    indices: Any = None
    """Positions of the rows in the memory (for priority updates), shape (N,)."""
    weights: Any = None
    """Importance weights of the rows, shape (N,), where the memory gives them."""
    extras: dict[str, Any] = field(default_factory=dict)
    """Further named columns (log-probabilities, returns, advantages, ...)."""

    def __len__(self) -> int:
        return len(self.rewards)

    def map(self, fn: Callable[[Any], Any]) -> Batch:
        """A new batch with ``fn`` applied to every array (``None`` fields stay ``None``).

        Agents use it to move a batch to torch: ``batch.map(torch.as_tensor)``.
        """
        values: dict[str, Any] = {}
        for name in _BATCH_FIELDS:
            value = getattr(self, name)
            if isinstance(value, dict):
                values[name] = {k: fn(v) for k, v in value.items()}
            elif value is not None:
                values[name] = fn(value)
            else:
                values[name] = None
        return Batch(**values)


_BATCH_FIELDS = tuple(f.name for f in fields(Batch))
"""`Batch`'s field names, in order (looked up once, not at every `Batch.map`)."""
