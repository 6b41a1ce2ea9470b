"""How an agent acts and learns in some of its copies at a time.

An agent acts in ``num_envs`` copies. On a single-agent environment every copy steps at every
step; on a multi-agent one a copy is a slot (an agent id in one environment copy), and a slot
decides only when its id does: at its turns in a turn-based game, until its id leaves in a
simultaneous one. Its action's outcome may then come several steps later, after other slots
of the same agent acted. `ActionRecords` keeps each slot's last action record until its
outcome comes, so that the step stored is the one the slot took; `observe_rows` stores and
moves on the slots an outcome came for, `begin_rows` starts the slots whose id decides for
the first time in an episode without one. Everything an agent keeps per copy takes any
subset of them: the policy's hidden states and exploration state step only for the slots
that decide (`Policy.act`), its per-copy filters only for the rows given, and a memory that
keeps each copy's steps in order gets the rows' slots with the step (`named_slots`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol

import numpy as np

from coach.agents.acting import Policy
from coach.core.run_phase import EVALUATE, RunPhase
from coach.core.types import ActionInfo, EnvResponse, Observation, Transition
from coach.exploration.exploration_policy import ExplorationPolicy
from coach.filters.pipeline import InputFilter
from coach.memories.memory import SLOT, Memory


class SlotAgent(Protocol):
    """What the functions here read and move on of an agent (`coach.agents.agent.Agent`)."""

    num_envs: int
    params: Any
    learns: bool
    phase: RunPhase
    state: Observation
    env_steps: int
    training_env_steps: int
    input_filter: InputFilter
    exploration: ExplorationPolicy | None
    memory: Memory | None
    policy: Policy

    def keep_step(
        self,
        state: Observation,
        info: ActionInfo,
        next_state: Observation,
        response: EnvResponse,
        rows: np.ndarray | None = None,
    ) -> None:
        """Store a step and count it on the agent's clocks."""

    def handle_episode_ended(
        self, done: np.ndarray, response: EnvResponse, copies: np.ndarray | None = None
    ) -> None:
        """Bookkeeping for the copies whose episode ended."""


class ActionRecords:
    """The last action record of each slot: its action and the columns stored with it.

    Args:
        num_slots: How many slots (the agent's copies).
    """

    def __init__(self, num_slots: int) -> None:
        self.num_slots = num_slots
        self.action: np.ndarray | None = None
        self.memory_extras: dict[str, np.ndarray] = {}

    def put(self, rows: np.ndarray | slice, info: ActionInfo) -> None:
        """The slots ``rows`` acted: ``info`` holds their records, row for row."""
        if self.action is None:
            self.action = _like(info.action, self.num_slots)
        self.action[rows] = info.action
        for key, value in info.memory_extras.items():
            column = self.memory_extras.get(key)
            if column is None:
                column = self.memory_extras[key] = _like(value, self.num_slots)
            column[rows] = value

    def take(self, rows: np.ndarray) -> ActionInfo:
        """The records of the slots ``rows``, row for row (copies)."""
        assert self.action is not None, "a slot's outcome follows its action"
        return ActionInfo(
            action=self.action[rows],
            memory_extras={key: value[rows] for key, value in self.memory_extras.items()},
        )

    def state_dict(self) -> dict[str, Any]:
        """The records, for checkpoints (a slot's outcome may come after a restore)."""
        return {"action": self.action, "memory_extras": self.memory_extras}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what `state_dict` returned."""
        self.action = state["action"]
        self.memory_extras = dict(state["memory_extras"])


def _like(value: np.ndarray, rows: int) -> np.ndarray:
    """A zeroed column of ``rows`` rows shaped and typed like ``value``'s rows."""
    value = np.asarray(value)
    return np.zeros((rows, *value.shape[1:]), dtype=value.dtype)


def named_slots(agent: SlotAgent, step: Transition, rows: np.ndarray | None) -> Transition:
    """``step`` with its rows' slots named in the `SLOT` column, where the agent's memory
    keeps each slot's steps in order (its parameters' ``ordered``): the steps of some slots
    (``rows``), and on a rollout worker every step (the learner's memory places them)."""
    if not getattr(agent.params.memory, "ordered", False):
        return step
    if rows is None:
        if agent.learns:
            return step  # every slot, in order: as the memory takes a single agent's steps
        rows = np.arange(agent.num_envs)
    return replace(step, extras={**step.extras, SLOT: rows})


def observe_rows(
    agent: SlotAgent, response: EnvResponse, rows: np.ndarray, info: ActionInfo
) -> None:
    """`Agent.observe` for the outcomes of the copies ``rows`` (row for row in
    ``response``): their steps stored with the action records they were taken with
    (``info``, row for row), their state moved on, the other copies' untouched."""
    phase = agent.phase
    learning = phase is not EVALUATE
    next_state = agent.input_filter.filter_observation(response.next_observation, learning, rows)
    if learning:
        state = {key: value[rows] for key, value in agent.state.items()}
        agent.keep_step(state, info, next_state, response, rows)
    done = response.done
    if done.any():
        copies = np.zeros(agent.num_envs, dtype=bool)
        copies[rows[done]] = True
        agent.input_filter.end_episodes(copies)
        agent.handle_episode_ended(done, response, copies)
    started = response.episode_started
    if agent.policy.hidden and started.any():
        copies = np.zeros(agent.num_envs, dtype=bool)
        copies[rows[started]] = True
        agent.policy.episodes_started(copies)
    moved_on = agent.input_filter.state_after(response, next_state, fresh=False, rows=rows)
    for key, value in moved_on.items():
        agent.state[key][rows] = value


def begin_rows(agent: SlotAgent, observation: Observation, rows: np.ndarray) -> None:
    """Episodes start in ``agent``'s copies ``rows`` at ``observation`` (row for row) without
    an outcome to observe: a slot whose id decides for the first time in an episode (the
    second player of a turn-based game, an id back after its copy reset)."""
    first = agent.input_filter.start_episodes(observation, rows)
    for key, value in first.items():
        agent.state[key][rows] = value
    copies = np.zeros(agent.num_envs, dtype=bool)
    copies[rows] = True
    agent.policy.episodes_started(copies)
