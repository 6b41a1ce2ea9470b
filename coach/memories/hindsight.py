"""Hindsight experience replay: finished episodes stored again with goals they did reach.

Andrychowicz et al., "Hindsight Experience Replay", NeurIPS 2017 (arXiv:1707.01495). In a
goal-based task with a sparse reward almost every episode fails, and a failed episode teaches
nothing about its own goal; but it is a successful episode for the goals it did reach. So
each step of a finished episode is stored once as it happened and ``k`` more times with its
desired goal replaced by a goal achieved in that episode (or elsewhere), the reward and
termination recomputed for the new goal by a `GoalReward`, without the environment.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from coach import validation as check
from coach.core.goals import GoalReward
from coach.core.spaces import StackedFrames
from coach.core.types import Batch, Transition
from coach.errors import CoachError
from coach.memories.experience_replay import ExperienceReplay
from coach.memories.memory import SLOT, Memory
from coach.memories.open_episodes import OpenEpisodes, flatten_step
from coach.validation import InvalidParameter

GOAL_SELECTION_METHODS = ("final", "future", "episode", "random")
"""The ways a relabeled goal is chosen (see `EpisodicHindsightExperienceReplay`)."""


@dataclass(slots=True, kw_only=True)
class EpisodicHindsightExperienceReplayParameters:
    """A uniform replay memory that adds hindsight copies of every finished episode."""

    ordered: ClassVar[bool] = True
    """The memory keeps each copy's steps in order: a step of some copies names them
    (`coach.memories.memory.SLOT`)."""

    max_size: int = 1_000_000
    """Capacity in rows (regular and hindsight); the oldest are overwritten first."""
    hindsight_goal_selection_method: str = "future"
    """How relabeled goals are chosen: ``"final"``, ``"future"``, ``"episode"``, ``"random"``."""
    hindsight_transitions_per_regular_transition: int = 4
    """``k``: relabeled copies stored per real step (the paper's best was 4 with future)."""
    goal_reward: GoalReward = field(default_factory=GoalReward)
    """How the task rewards a goal, to recompute relabeled rewards and terminations."""
    achieved_goal_key: str = "achieved_goal"
    """The observation key of the goal the state achieves."""
    desired_goal_key: str = "desired_goal"
    """The observation key of the goal asked for, which relabeling replaces."""

    def validate(self) -> None:
        check.whole("max_size", self.max_size, 1)
        check.one_of(
            "hindsight_goal_selection_method",
            self.hindsight_goal_selection_method,
            GOAL_SELECTION_METHODS,
        )
        k = self.hindsight_transitions_per_regular_transition
        check.whole("hindsight_transitions_per_regular_transition", k, 0)
        if self.max_size < 1 + k:
            raise InvalidParameter(
                "max_size", f"must hold a step and its {k} relabeled copies", self.max_size
            )
        check.name("achieved_goal_key", self.achieved_goal_key)
        check.name("desired_goal_key", self.desired_goal_key)

    def memory_class(self) -> type[EpisodicHindsightExperienceReplay]:
        """The memory these parameters build."""
        return EpisodicHindsightExperienceReplay

    def build(
        self,
        observation_space: spaces.Dict,
        action_space: spaces.Space[Any],
        rng: np.random.Generator,
        extra_spaces: dict[str, spaces.Space[Any]] | None = None,
    ) -> EpisodicHindsightExperienceReplay:
        """The memory, for an agent's spaces (and its extra columns), drawing with ``rng``."""
        return self.memory_class()(
            self.max_size,
            observation_space,
            action_space,
            rng,
            extra_spaces,
            hindsight_goal_selection_method=self.hindsight_goal_selection_method,
            hindsight_transitions_per_regular_transition=(
                self.hindsight_transitions_per_regular_transition
            ),
            goal_reward=self.goal_reward,
            achieved_goal_key=self.achieved_goal_key,
            desired_goal_key=self.desired_goal_key,
        )


class EpisodicHindsightExperienceReplay(ExperienceReplay):
    """Experience replay that stores each finished episode with ``k`` relabeled copies.

    Andrychowicz, Wolski, Ray, Schneider, Fong, Welinder, McGrew, Tobin, Abbeel and Zaremba,
    "Hindsight Experience Replay", NeurIPS 2017 (arXiv:1707.01495).

    `store` takes one step of every env, as any memory does, but keeps each env's steps in
    an open episode until that episode terminates or is truncated. Then its ``T`` steps go
    into the ring as they happened, followed by ``T * k`` relabeled rows, ``k`` per step in
    step order. The relabeled copy of step ``t`` has goal ``g'`` as the desired goal of both
    its state and its next state, and

    - reward ``goal_reward.reward(achieved_t, g')``, where ``achieved_t`` is the achieved goal
      of step ``t``'s next state;
    - terminated ``goal_reward.reached(achieved_t, g')`` (the original flag when the goal
      reward does not terminate on reaching);
    - truncated the original flag, unless the copy is now terminated;
    - the same extra columns as the step.

    The goal ``g'`` is the next-state achieved goal of a step ``t'`` of the episode, drawn
    from the memory's generator as one array of ``T * k`` draws per episode:

    - ``"final"``: ``t' = T - 1``, the goal the episode ended in (no draw);
    - ``"future"``: ``t' = rng.integers(t, T)``, a goal reached at step ``t`` or later;
    - ``"episode"``: ``t' = rng.integers(0, T)``, any goal reached in the episode;
    - ``"random"``: the next-state achieved goal of a live row of the whole memory drawn
      uniformly before the episode is stored (of this episode, as ``"episode"``, while the
      memory is empty).

    Design notes: there is no ``flush``. The steps of an open episode are in no sampled row,
    and they wait for the episode's end, because every strategy but ``"random"`` needs the
    rest of the episode; ``len`` counts stored rows only (regular and hindsight). Envs must
    therefore not restart an episode without ending it (terminated or truncated): the steps
    of the new episode would join the open one. Open episodes are kept in a checkpoint
    (`state_dict`), so a run resumed mid-episode carries on with them.

    Args:
        capacity: How many rows (regular and hindsight) it holds. An episode of ``T`` steps
            needs ``T * (1 + k)`` of them.
        observation_space: The agent's (filtered) observation space, a ``spaces.Dict`` with
            the achieved and desired goal keys, of one shape and not frame-stacked.
        action_space: The agent's action space.
        rng: The generator relabeled goals and samples are drawn with.
        extra_spaces: Further per-transition columns an agent keeps, by name; relabeled rows
            keep their step's values.
        hindsight_goal_selection_method: ``"final"``, ``"future"``, ``"episode"`` or
            ``"random"``.
        hindsight_transitions_per_regular_transition: ``k >= 0``, the relabeled copies per
            step (0 stores the episodes only).
        goal_reward: How the task rewards goals; ``GoalReward()`` (BitFlip's) when not given.
        achieved_goal_key: The observation key of the achieved goal.
        desired_goal_key: The observation key of the desired goal.
    """

    def __init__(
        self,
        capacity: int,
        observation_space: spaces.Dict,
        action_space: spaces.Space[Any],
        rng: np.random.Generator,
        extra_spaces: dict[str, spaces.Space[Any]] | None = None,
        *,
        hindsight_goal_selection_method: str = "future",
        hindsight_transitions_per_regular_transition: int = 4,
        goal_reward: GoalReward | None = None,
        achieved_goal_key: str = "achieved_goal",
        desired_goal_key: str = "desired_goal",
    ) -> None:
        if hindsight_goal_selection_method not in GOAL_SELECTION_METHODS:
            raise CoachError(
                f"unknown hindsight goal selection method {hindsight_goal_selection_method!r}; "
                f"choose one of {list(GOAL_SELECTION_METHODS)}"
            )
        k = hindsight_transitions_per_regular_transition
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0:
            raise CoachError(
                f"hindsight_transitions_per_regular_transition must be an integer >= 0, got {k!r}"
            )
        _check_goal_spaces(observation_space, achieved_goal_key, desired_goal_key)
        super().__init__(capacity, observation_space, action_space, rng, extra_spaces)
        if capacity < 1 + k:
            raise CoachError(
                f"a hindsight memory of capacity {capacity} cannot hold one step with its {k} "
                f"hindsight copies; give it max_size >= {1 + k}"
            )
        self.goal_selection_method = hindsight_goal_selection_method
        self.k = int(k)
        """Relabeled copies stored per real step."""
        self.goal_reward = goal_reward if goal_reward is not None else GoalReward()
        self.goal_reward.validate()
        self.achieved_goal_key = achieved_goal_key
        self.desired_goal_key = desired_goal_key
        self.max_episode_steps = capacity // (1 + self.k)
        """The longest episode whose rows, with their hindsight copies, fit the capacity."""
        self._streams: dict[int, OpenEpisodes] = {}
        """Each source's unfinished episodes, one per env of the source; made by its first
        `store`, sized by its batch. A run has one source, or one per rollout worker."""
        self._restoring = False
        """Set while `ExperienceReplay.load_state_dict` stores saved rows back as they are."""

    @property
    def open_episode_lengths(self) -> np.ndarray:
        """How many steps each env's unfinished episode holds, shape (B,) (empty before any
        `store`), for the source of stream 0."""
        if 0 not in self._streams:
            return np.zeros(0, dtype=np.int64)
        return self._streams[0].lengths.copy()

    def stream(self, key: int) -> HindsightStream:
        """Where source ``key`` stores: its envs' episodes are kept apart from the other
        sources' (rollout workers whose env copies are numbered alike)."""
        return HindsightStream(self, key)

    def store(self, transition: Transition, stream: int = 0) -> None:
        """Add one step of every env to its open episode; store the episodes that end here.
        ``stream`` names the source of the step (`stream`)."""
        if self._restoring:  # saved rows, hindsight copies included: into the ring as they are
            super().store(transition)
            return
        step = flatten_step(transition)
        slots = step.pop(("extras", SLOT), None)  # a step of some copies: theirs go on
        if {key for name, key in step if name == "extras"} != set(self.extras):
            raise CoachError(
                f"this memory stores the columns {sorted(self.extras)} with each step, "
                f"got {sorted(transition.extras)}"
            )
        num_envs = len(transition) if slots is None else int(slots.max(initial=-1)) + 1
        episodes = self._streams.get(stream)
        if episodes is None:
            episodes = self._streams[stream] = OpenEpisodes.empty(step, num_envs)
        elif slots is None and num_envs != episodes.num_envs:
            raise CoachError(
                f"this hindsight memory keeps the episodes of {episodes.num_envs} envs, "
                f"got a step of {num_envs}"
            )
        episodes.widen(num_envs)
        envs = np.arange(len(transition)) if slots is None else np.asarray(slots)
        too_long = envs[episodes.lengths[envs] >= self.max_episode_steps]
        if too_long.size:
            raise CoachError(
                f"env {too_long[0]}'s episode has more than {self.max_episode_steps} steps: "
                f"with {self.k} hindsight copies per step it needs more rows than the memory's "
                f"capacity of {self.capacity}; raise max_size or lower "
                f"hindsight_transitions_per_regular_transition"
            )
        episodes.append(step, None if slots is None else envs)
        for env in envs[transition.done]:
            self._store_episode(episodes.pop(int(env)))

    def end_episodes(self) -> None:
        """The agent's episodes restart (an evaluation begins, a run resumes without its
        episodes): each open episode is stored as it is, truncated at its last step."""
        for episodes in self._streams.values():
            for env in np.flatnonzero(episodes.lengths):
                self._end_episode(episodes.pop(int(env)))

    def _end_episode(self, episode: Transition) -> None:
        """Store an unfinished episode, truncated at its last step."""
        episode.truncated = episode.truncated.copy()
        episode.truncated[-1] = not episode.terminated[-1]
        self._store_episode(episode)

    def _store_episode(self, episode: Transition) -> None:
        """Store an episode's steps (T rows) and its relabeled copies."""
        # The hindsight rows first, so that "random" draws from the memory before this episode.
        hindsight = self._hindsight(episode) if self.k else None
        super().store(episode)
        if hindsight is not None:
            super().store(hindsight)

    def _hindsight(self, episode: Transition) -> Transition:
        """The ``T * k`` relabeled copies of an episode's steps, ``k`` per step in order."""
        achieved = episode.next_state[self.achieved_goal_key]
        length = len(achieved)
        steps = np.repeat(np.arange(length), self.k)
        goals = self._select_goals(achieved, steps)
        state = {key: value[steps] for key, value in episode.state.items()}
        next_state = {key: value[steps] for key, value in episode.next_state.items()}
        state[self.desired_goal_key] = goals
        next_state[self.desired_goal_key] = goals
        # The reward is for the step's outcome, the goal its next state achieved.
        outcome = achieved[steps]
        terminated = (
            self.goal_reward.reached(outcome, goals)
            if self.goal_reward.terminate_when_reached
            else episode.terminated[steps]
        )
        return Transition(
            state=state,
            action=episode.action[steps],
            reward=self.goal_reward.reward(outcome, goals),
            next_state=next_state,
            terminated=terminated,
            truncated=episode.truncated[steps] & ~terminated,
            extras={k: v[steps] for k, v in episode.extras.items()},
        )

    def _select_goals(self, achieved: np.ndarray, steps: np.ndarray) -> np.ndarray:
        """A goal for each relabeled copy of the steps ``steps`` (one entry per copy), from
        the episode's next-state achieved goals ``achieved`` (T, *goal_shape)."""
        length = len(achieved)
        method = self.goal_selection_method
        if method == "final":
            return achieved[np.full(len(steps), length - 1)]
        if method == "future":
            return achieved[self.rng.integers(steps, length)]
        if method == "random" and len(self):
            rows = self._live_rows()[self.rng.integers(0, len(self), size=len(steps))]
            return self.next_states[self.achieved_goal_key][rows]
        # "episode", and "random" while the memory holds nothing else to draw from.
        return achieved[self.rng.integers(0, length, size=len(steps))]

    def state_dict(self) -> dict[str, Any]:
        """The ring's rows as `ExperienceReplay` saves them, with the open episodes."""
        state = super().state_dict()
        state["open_episodes"] = {key: e.state_dict() for key, e in self._streams.items()}
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what `state_dict` returned (or the state of a plain `ExperienceReplay`,
        with no open episodes). Into another capacity, the live rows are stored again as
        they are: hindsight copies are not made twice."""
        self._restoring = True
        try:
            super().load_state_dict(state)
        finally:
            self._restoring = False
        saved = state.get("open_episodes") or {}
        if "lengths" in saved:  # saved before memories had streams: the one source's
            saved = {0: saved}
        self._streams = {int(k): OpenEpisodes.from_state_dict(v) for k, v in saved.items()}
        for episodes in self._streams.values():
            self._check_open_episodes(episodes)

    def _check_open_episodes(self, episodes: OpenEpisodes) -> None:
        keys = [*self.states, *self.frame_stores]
        expected = {(name, key) for name in ("state", "next_state") for key in keys}
        expected |= {("extras", key) for key in self.extras}
        expected |= {(name, "") for name in ("action", "reward", "terminated", "truncated")}
        if set(episodes.columns) != expected:
            raise CoachError(
                f"the saved open episodes of the hindsight memory hold the columns "
                f"{sorted(episodes.columns)}, but this memory stores {sorted(expected)}: "
                f"they were saved for other spaces"
            )
        longest = int(episodes.lengths.max(initial=0))
        if longest > self.max_episode_steps:
            raise CoachError(
                f"a saved open episode has {longest} steps, more than the "
                f"{self.max_episode_steps} this memory's capacity of {self.capacity} holds with "
                f"{self.k} hindsight copies per step; restore it with a larger max_size"
            )


class HindsightStream(Memory):
    """One source's view of a hindsight memory: its steps join its own open episodes, and
    its finished episodes go to the shared rows (`EpisodicHindsightExperienceReplay.stream`)."""

    def __init__(self, memory: EpisodicHindsightExperienceReplay, key: int) -> None:
        self.memory = memory
        self.key = key

    def store(self, transition: Transition) -> None:
        self.memory.store(transition, stream=self.key)

    def sample(self, batch_size: int) -> Batch:
        return self.memory.sample(batch_size)

    def __len__(self) -> int:
        return len(self.memory)


def _check_goal_spaces(observation_space: spaces.Dict, achieved: str, desired: str) -> None:
    present = list(observation_space.spaces) if isinstance(observation_space, spaces.Dict) else []
    if achieved not in present or desired not in present:
        raise CoachError(
            f"hindsight replay needs the observation keys {achieved!r} and {desired!r}, "
            f"got the keys {present}; set achieved_goal_key and desired_goal_key"
        )
    achieved_space, desired_space = observation_space[achieved], observation_space[desired]
    if isinstance(achieved_space, StackedFrames) or isinstance(desired_space, StackedFrames):
        raise CoachError(
            f"hindsight replay cannot relabel frame-stacked goals ({achieved!r}, {desired!r}); "
            f"stack only the other observation keys"
        )
    if achieved_space.shape != desired_space.shape:
        raise CoachError(
            f"hindsight replay replaces {desired!r} by values of {achieved!r}, so they need "
            f"one shape, got {desired_space.shape} and {achieved_space.shape}"
        )
