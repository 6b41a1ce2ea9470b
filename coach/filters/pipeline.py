"""Filter pipelines: each agent's input filter (observations, rewards) and output filter.

An empty pipeline is the identity and costs nothing on the hot path.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from gymnasium import spaces

from coach.core.types import EnvResponse, Observation, any_set
from coach.errors import CoachError
from coach.filters.filter import ActionFilter, ObservationFilter, RewardFilter
from coach.filters.observation.select_keys import ObservationSelectKeysFilter
from coach.filters.running_stats import RunningMeanStd


def _some_rows(f: Any, batch: np.ndarray, update: bool, rows: np.ndarray) -> np.ndarray:
    """Filter ``f`` on the rows of the copies ``rows``: a filter with a history per copy
    moves those copies' on, the others filter the rows as any batch."""
    return f.filter(batch, update, rows) if f.per_copy_state else f.filter(batch, update)


@dataclass(slots=True, kw_only=True)
class InputFilter:
    """What an agent's observations and rewards go through before it sees them."""

    select_keys: ObservationSelectKeysFilter | None = None
    """Keeps only some observation keys; applied first, before the per-key filters."""
    observation_filters: dict[str, list[ObservationFilter]] = field(default_factory=dict)
    """Filters per observation key, applied in order."""
    reward_filters: list[RewardFilter] = field(default_factory=list)
    """Filters applied to the reward, in order."""

    @property
    def filters_observations(self) -> bool:
        """Whether observations go through any filter at all."""
        return self.select_keys is not None or bool(self.observation_filters)

    def bind(self, observation_space: spaces.Dict) -> spaces.Dict:
        """Check the filters against the environment's space; return the agent's space."""
        if self.select_keys is not None:
            observation_space = self.select_keys.output_space(observation_space)
        unknown = set(self.observation_filters) - set(observation_space.spaces)
        if unknown:
            raise CoachError(
                f"observation filters for {sorted(unknown)}, but the observation has keys "
                f"{sorted(observation_space.spaces)}"
            )
        filtered = {}
        for key, space in observation_space.spaces.items():
            for f in self.observation_filters.get(key, []):
                space = f.output_space(space)
            filtered[key] = space
        return spaces.Dict(filtered)

    def filter_observation(
        self, observation: dict[str, np.ndarray], update: bool = True, rows: Any = None
    ) -> dict[str, np.ndarray]:
        """``observation`` through the filters: every copy's, or with ``rows`` (an array)
        those of the copies ``rows``, row for row."""
        if self.select_keys is None and not self.observation_filters:
            return observation  # the per-step path of an agent without observation filters
        if rows is None:
            return self._through(observation, lambda f, x: f.filter(x, update))
        return self._through(observation, lambda f, x: _some_rows(f, x, update, rows))

    def filter_reward(
        self, reward: np.ndarray, update: bool = True, rows: np.ndarray | None = None
    ) -> np.ndarray:
        """``reward`` through the filters, as `filter_observation`."""
        for f in self.reward_filters:
            reward = (
                f.filter(reward, update) if rows is None else _some_rows(f, reward, update, rows)
            )
        return reward

    def start_episodes(
        self, observation: dict[str, np.ndarray], rows: np.ndarray
    ) -> dict[str, np.ndarray]:
        """The first observations of new episodes in the envs ``rows`` (one row each), through
        the filters; filters with per-episode history start it over for those envs."""
        return self._through(observation, lambda f, x: f.start_episodes(x, rows))

    def state_after(
        self,
        response: EnvResponse,
        next_state: Observation,
        fresh: bool,
        rows: np.ndarray | None = None,
    ) -> Observation:
        """What an agent acts on after ``response``: ``next_state`` (this pipeline's view of
        ``next_observation``) where an episode goes on, the filtered first observation where
        one started. Copies, kept past the environment's next step, unless ``fresh``: the
        environment makes new arrays for every response and no filter changed them. With
        ``rows``, the response's rows are the copies ``rows``."""
        if self.select_keys is None and not self.observation_filters:  # (filters_observations)
            # Unfiltered, it is the environment's ``observation`` as it is, new episodes'
            # first observations included.
            if fresh:
                return response.observation
            return {key: value.copy() for key, value in response.observation.items()}
        state = {}
        for key, value in next_state.items():  # a loop: cheaper than a comprehension here
            state[key] = value.copy()
        started = response.episode_started
        if any_set(started):
            at = np.flatnonzero(started)
            copies = at if rows is None else rows[at]
            first = self.start_episodes({k: v[at] for k, v in response.observation.items()}, copies)
            for key, value in first.items():
                state[key][at] = value
        return state

    def _through(
        self, observation: dict[str, Any], apply: Callable[[Any, Any], Any]
    ) -> dict[str, Any]:
        """``observation`` through the key selection, then each key's filters, in order."""
        if self.select_keys is not None:
            observation = apply(self.select_keys, observation)
        if not self.observation_filters:
            return observation
        out = dict(observation)
        for key, filters in self.observation_filters.items():
            value = out[key]
            for f in filters:
                value = apply(f, value)
            out[key] = value
        return out

    def end_episodes(self, env_mask: np.ndarray) -> None:
        """The episodes of the envs in ``env_mask`` ended (their last reward is filtered)."""
        for f in self.reward_filters:
            f.reset(env_mask)

    def _all(self) -> list[Any]:
        return [f for fs in self.observation_filters.values() for f in fs] + self.reward_filters

    def running_statistics(self) -> list[RunningMeanStd]:
        """The running statistics the filters learn (normalizations), in a fixed order:
        rollout workers and the learner keep theirs in step."""
        found = []
        for item in self._all():
            stats = getattr(item, "stats", None)
            if isinstance(stats, RunningMeanStd):
                found.append(stats)
        return found

    def state_dict(self) -> dict[str, Any]:
        return {str(i): f.state_dict() for i, f in enumerate(self._all())}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for i, f in enumerate(self._all()):
            f.load_state_dict(state[str(i)])


@dataclass(slots=True, kw_only=True)
class OutputFilter:
    """What an agent's actions go through on their way to the environment."""

    action_filters: list[ActionFilter] = field(default_factory=list)
    """Filters applied to the action, in order from the agent to the environment."""

    def bind(self, action_space: spaces.Space[Any]) -> spaces.Space[Any]:
        """Check the filters against the environment's action space; return the agent's."""
        for f in reversed(self.action_filters):
            action_space = f.input_space(action_space)
        return action_space

    def filter(self, action: np.ndarray) -> np.ndarray:
        for f in self.action_filters:
            action = f.filter(action)
        return action

    def state_dict(self) -> dict[str, Any]:
        return {str(i): f.state_dict() for i, f in enumerate(self.action_filters)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for i, f in enumerate(self.action_filters):
            f.load_state_dict(state[str(i)])
