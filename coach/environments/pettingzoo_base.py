"""What the two PettingZoo adapters share: the copies, the spaces, the episode bookkeeping.

`PettingZooEnvironment` makes the copies, lays each id's observations out in a
``spaces.Dict`` (`ObservationLayout`), keeps each id's and each copy's episode so far, and
saves and restores the episodes in flight (`coach.environments.object_state`). Its two
subclasses step the copies through PettingZoo's two APIs:
`coach.environments.pettingzoo_parallel` (every id in play acts at every step) and
`coach.environments.pettingzoo_aec` (the ids take turns). PettingZoo itself is imported by
neither: it is an optional dependency (``pip install coach[multiagent]``), which
`coach.environments.pettingzoo_environment` loads when it makes an environment.

PettingZoo: Terry et al., "PettingZoo: Gym for Multi-Agent Reinforcement Learning", NeurIPS
2021 (https://arxiv.org/abs/2009.14471).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from coach.core.action_masks import ACTION_MASK
from coach.core.types import Observation
from coach.environments.multi_agent import MultiAgentEnvironment, MultiAgentResponse
from coach.environments.multi_agent_draft import AgentDraft, ResponseDraft
from coach.environments.object_state import (
    UnsaveableState,
    object_state,
    restore_object_state,
)
from coach.errors import CoachError


@dataclass(frozen=True, slots=True)
class ObservationLayout:
    """How one id's observations are written into the arrays of its ``spaces.Dict``.

    A dict observation keeps its keys; any other goes under one key. An action mask that the
    environment reports in the info (``info["action_mask"]``) instead of the observation is
    added under ``action_mask``, as int8 zeros and ones.
    """

    space: spaces.Dict
    """The id's observation space."""
    flat_key: str | None
    """The key of a non-dict observation; ``None`` for a dict one."""
    keys: tuple[str, ...]
    """The keys of a dict observation (empty for a non-dict one)."""
    mask_size: int
    """The length of the action mask read from the info; 0 when there is none."""

    @classmethod
    def of(
        cls, agent_id: str, space: spaces.Space[Any], observation_key: str, mask_size: int
    ) -> ObservationLayout:
        """The layout of an id whose environment observation space is ``space``.

        Raises:
            CoachError: for a space whose observations are no fixed-shape arrays, or a mask
                whose key is taken.
        """
        inner = dict(space.spaces) if isinstance(space, spaces.Dict) else {observation_key: space}
        if mask_size and observation_key == ACTION_MASK and not isinstance(space, spaces.Dict):
            raise CoachError(
                f"observation_key {ACTION_MASK!r} is taken by {agent_id}'s action mask (in its "
                f"info): another key, such as 'observation', would do"
            )
        if ACTION_MASK in inner:
            mask_size = 0  # the observation carries the mask
        elif mask_size:
            inner[ACTION_MASK] = spaces.Box(0, 1, shape=(mask_size,), dtype=np.int8)
        for key, part in inner.items():
            if part.shape is None or isinstance(part, spaces.Dict | spaces.Tuple):
                raise CoachError(
                    f"{agent_id}'s observation {key!r} is a {type(part).__name__}: the "
                    f"PettingZoo adapter takes arrays of a fixed shape (Box, Discrete, "
                    f"MultiBinary, MultiDiscrete), alone or in a flat Dict"
                )
        if isinstance(space, spaces.Dict):
            return cls(spaces.Dict(inner), None, tuple(space.spaces), mask_size)
        return cls(spaces.Dict(inner), observation_key, (), mask_size)

    def zeros(self, num_envs: int) -> Observation:
        """Arrays of zeros for ``num_envs`` rows."""
        return {
            key: np.zeros((num_envs, *(part.shape or ())), dtype=part.dtype)
            for key, part in self.space.spaces.items()
        }

    def write(self, arrays: Observation, row: int, observation: Any, info: Any) -> None:
        """Write ``observation`` (and the mask of ``info``) into row ``row`` of ``arrays``."""
        if self.flat_key is not None:
            arrays[self.flat_key][row] = observation
        else:
            for key in self.keys:
                arrays[key][row] = observation[key]
        if self.mask_size:
            # An info without a mask (a final observation) masks nothing.
            arrays[ACTION_MASK][row] = info.get(ACTION_MASK, 1) if info else 1


class PettingZooEnvironment(MultiAgentEnvironment):
    """``num_envs`` copies of a PettingZoo environment, stepped in a loop in this process.

    Args:
        make_env: Makes one copy (`PettingZooEnvironmentParameters.make_env`).
        num_envs: How many copies step together.
        observation_key: The key a non-dict observation gets in an id's ``spaces.Dict``.

    Raises:
        CoachError: when ``num_envs`` is below 1, the environment has no agents, or an id's
            observations are no fixed-shape arrays.
    """

    fresh_observations = True
    """Every response's observation arrays are new or handed on unchanged, and never written
    after: an agent may keep them without a copy."""

    def __init__(
        self,
        make_env: Callable[[], Any],
        num_envs: int = 1,
        observation_key: str = "observation",
    ) -> None:
        if num_envs < 1:
            raise CoachError(f"num_envs must be >= 1, got {num_envs}")
        self.num_envs = num_envs
        self.envs = [make_env() for _ in range(num_envs)]
        first = self.envs[0]
        self.agent_ids = tuple(first.possible_agents)
        if not self.agent_ids:
            raise CoachError(f"{first} has no agents (its possible_agents is empty)")
        self.action_spaces = {i: first.action_space(i) for i in self.agent_ids}
        raw_spaces = {i: first.observation_space(i) for i in self.agent_ids}
        mask_sizes = self._info_mask_sizes(make_env, raw_spaces)
        self._layouts = {
            i: ObservationLayout.of(i, raw_spaces[i], observation_key, mask_sizes.get(i, 0))
            for i in self.agent_ids
        }
        self.observation_spaces = {i: layout.space for i, layout in self._layouts.items()}
        self._copied_actions = {i: bool(space.shape) for i, space in self.action_spaces.items()}
        """Ids whose actions are arrays: copied, since the caller may reuse its buffers."""
        none = np.zeros(num_envs, dtype=bool)
        every = np.ones(num_envs, dtype=bool)
        none.flags.writeable = every.flags.writeable = False
        self._constants = (none, every)
        """Flag arrays shared by the responses where no or every row is set (read-only)."""
        self._observations = {i: layout.zeros(num_envs) for i, layout in self._layouts.items()}
        """Each id's observation arrays of the last response."""
        self._returns = {i: [0.0] * num_envs for i in self.agent_ids}
        self._lengths = {i: [0] * num_envs for i in self.agent_ids}
        self._copy_returns = [0.0] * num_envs
        self._copy_lengths = [0] * num_envs
        self._deciding: list[list[str]] = [[] for _ in range(num_envs)]
        """Per copy, the ids that decide next."""
        self._acted: list[set[str]] = [set() for _ in range(num_envs)]
        """Per copy, the ids that have acted this episode."""
        self.total_steps = 0
        self.total_episodes = 0

    # -- what the two APIs do their own way -----------------------------------------------

    @abstractmethod
    def _reset_infos(self, env: Any) -> dict[str, Any]:
        """Reset ``env`` unseeded and return its infos by id."""

    @abstractmethod
    def _start(self, draft: ResponseDraft, copy: int, seed: int | None) -> None:
        """Reset copy ``copy`` and draft its first decisions (and its infos)."""

    # -- shared ---------------------------------------------------------------------------

    def _info_mask_sizes(
        self, make_env: Callable[[], Any], raw_spaces: dict[str, spaces.Space[Any]]
    ) -> dict[str, int]:
        """The mask length of each id whose action mask is in the info, not the observation.

        The info exists only after a reset: a probe copy is made, reset and closed, so that
        the copies themselves start untouched.
        """
        if all(
            isinstance(space, spaces.Dict) and ACTION_MASK in space.spaces
            for space in raw_spaces.values()
        ):
            return {}
        probe = make_env()
        infos = self._reset_infos(probe)
        probe.close()
        masks = {i: info[ACTION_MASK] for i, info in infos.items() if ACTION_MASK in (info or {})}
        if not masks:
            return {}
        sizes = {}
        for i in self.agent_ids:
            action_space = self.action_spaces[i]
            if i in masks:
                sizes[i] = len(masks[i])
            elif isinstance(action_space, spaces.Discrete):
                sizes[i] = int(action_space.n)  # its mask shows on its turn
        return sizes

    def _draft(self) -> ResponseDraft:
        agents = {
            i: AgentDraft(layout.write, self._observations[i], self._constants)
            for i, layout in self._layouts.items()
        }
        return ResponseDraft(agents, self.num_envs)

    def _respond(self, draft: ResponseDraft) -> MultiAgentResponse:
        response = draft.response(
            self._returns, self._lengths, self._copy_returns, self._copy_lengths
        )
        for agent_id, agent_response in response.responses.items():
            self._observations[agent_id] = agent_response.observation
        return response

    def _end_copy(self, draft: ResponseDraft, copy: int) -> None:
        """The episode of ``copy`` is over: keep its values in the draft, zero them."""
        draft.end_copy(
            copy, self._copy_returns[copy], self._copy_lengths[copy], self._returns, self._lengths
        )
        self._clear(copy)
        self.total_episodes += 1

    def _clear(self, copy: int) -> None:
        for agent_id in self.agent_ids:
            self._returns[agent_id][copy] = 0.0
            self._lengths[agent_id][copy] = 0
        self._copy_returns[copy] = 0.0
        self._copy_lengths[copy] = 0
        self._acted[copy] = set()

    def reset(self, seed: int | None = None) -> MultiAgentResponse:
        draft = self._draft()
        for copy in range(self.num_envs):
            self._clear(copy)
            self._start(draft, copy, None if seed is None else seed + copy)
        if seed is not None:
            # One seed per id and copy: ids with like spaces must not sample alike.
            for copy, env in enumerate(self.envs):
                seeds = np.random.SeedSequence(seed + copy).generate_state(len(self.agent_ids))
                for agent_id, id_seed in zip(self.agent_ids, seeds, strict=True):
                    env.action_space(agent_id).seed(int(id_seed))
        return self._respond(draft)

    def _action(self, actions: dict[str, np.ndarray], agent_id: str, copy: int) -> Any:
        action = actions[agent_id][copy]
        return action.copy() if self._copied_actions[agent_id] else action

    def state_dict(self) -> dict[str, Any] | None:
        try:
            envs = [object_state(env) for env in self.envs]
            action_spaces = object_state(self.action_spaces)
        except UnsaveableState:
            # Part of an environment is neither a plain value nor an object with attributes
            # (a handle into a C library, a lock): its episodes restart after a restore.
            return None
        return {
            "agent_ids": list(self.agent_ids),
            "envs": envs,
            "action_spaces": action_spaces,
            "observations": {i: dict(arrays) for i, arrays in self._observations.items()},
            "returns": {i: list(values) for i, values in self._returns.items()},
            "lengths": {i: list(values) for i, values in self._lengths.items()},
            "copy_returns": list(self._copy_returns),
            "copy_lengths": list(self._copy_lengths),
            "deciding": [list(ids) for ids in self._deciding],
            "acted": [sorted(ids) for ids in self._acted],
            "total_steps": self.total_steps,
            "total_episodes": self.total_episodes,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if list(state["agent_ids"]) != list(self.agent_ids) or len(state["envs"]) != len(self.envs):
            raise CoachError(
                f"the checkpoint was saved with num_envs={len(state['envs'])} and agents "
                f"{list(state['agent_ids'])}, this environment has num_envs={self.num_envs} "
                f"and agents {list(self.agent_ids)}"
            )
        try:
            for env, env_state in zip(self.envs, state["envs"], strict=True):
                self._reset_infos(env)  # so that what a reset makes is there to restore into
                restore_object_state(env, env_state)
            restore_object_state(self.action_spaces, state["action_spaces"])
        except UnsaveableState as error:
            raise CoachError(
                f"the checkpoint's episodes do not fit this environment ({error}): was it "
                f"saved with other environment kwargs?"
            ) from error
        self._observations = {
            i: {key: np.array(value) for key, value in state["observations"][i].items()}
            for i in self.agent_ids
        }
        self._returns = {i: [float(v) for v in state["returns"][i]] for i in self.agent_ids}
        self._lengths = {i: [int(v) for v in state["lengths"][i]] for i in self.agent_ids}
        self._copy_returns = [float(v) for v in state["copy_returns"]]
        self._copy_lengths = [int(v) for v in state["copy_lengths"]]
        self._deciding = [list(ids) for ids in state["deciding"]]
        self._acted = [set(ids) for ids in state["acted"]]
        self.total_steps = int(state["total_steps"])
        self.total_episodes = int(state["total_episodes"])

    def render(self) -> Any:
        """Copy 0's frame, where the environment was made with a ``render_mode``."""
        env = self.envs[0]
        if getattr(env, "render_mode", None) is None:  # PettingZoo has no render Protocol
            return None
        return env.render()

    def close(self) -> None:
        for env in self.envs:
            env.close()
