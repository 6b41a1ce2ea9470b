"""Unit tests for coach/memories/hindsight.py.

Every step is tagged: step ``t`` of episode ``e`` has the observation ``[e, t]``, action
``t``, the achieved goal ``[t, e, 0]`` in its state and ``[t + 1, e, 0]`` in its next state,
and the desired goal ``NEVER`` (reached by no step). A relabeled goal therefore names the
step ``t' = g[0] - 1`` and the episode ``e = g[1]`` whose next state achieved it, and it is
reached by step ``t`` exactly when ``t' == t`` in the same episode. The tests draw the
expected goals from a generator seeded like the memory's, with the calls the docstring of
`EpisodicHindsightExperienceReplay` documents.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from gymnasium import spaces

from coach.core.spaces import StackedFrames
from coach.core.types import Batch, Transition
from coach.errors import CoachError
from coach.memories import (
    EpisodicHindsightExperienceReplay,
    EpisodicHindsightExperienceReplayParameters,
    ExperienceReplay,
    GoalReward,
)
from coach_environments.bit_flip import BitFlipEnv

GOAL_SPACE = spaces.Box(-np.inf, np.inf, shape=(3,), dtype=np.float32)
OBSERVATION_SPACE = spaces.Dict(
    {
        "observation": spaces.Box(-np.inf, np.inf, shape=(2,), dtype=np.float32),
        "achieved_goal": GOAL_SPACE,
        "desired_goal": GOAL_SPACE,
    }
)
ACTION_SPACE = spaces.Discrete(100)
NEVER = np.array([-1.0, -1.0, -1.0], dtype=np.float32)
SEED = 7


def _memory(
    method: str = "future",
    k: int = 4,
    capacity: int = 1000,
    seed: int = SEED,
    extra_spaces: dict[str, spaces.Space] | None = None,
    goal_reward: GoalReward | None = None,
) -> EpisodicHindsightExperienceReplay:
    return EpisodicHindsightExperienceReplay(
        capacity,
        OBSERVATION_SPACE,
        ACTION_SPACE,
        np.random.default_rng(seed),
        extra_spaces,
        hindsight_goal_selection_method=method,
        hindsight_transitions_per_regular_transition=k,
        goal_reward=goal_reward,
    )


def _batch(steps: list[tuple[int, int, bool]], terminated_last: bool = False) -> dict:
    """The arguments of `store` for one step per env: (episode, step, whether it is the last),
    the last one truncated (or terminated, with ``terminated_last``)."""
    e = np.array([s[0] for s in steps], dtype=np.float32)
    t = np.array([s[1] for s in steps], dtype=np.float32)
    last = np.array([s[2] for s in steps])
    zeros = np.zeros_like(t)
    return {
        "state": {
            "observation": np.stack([e, t], axis=1),
            "achieved_goal": np.stack([t, e, zeros], axis=1),
            "desired_goal": np.tile(NEVER, (len(steps), 1)),
        },
        "action": t.astype(np.int64),
        "reward": np.full(len(steps), -1.0, dtype=np.float32),
        "next_state": {
            "observation": np.stack([e, t + 1], axis=1),
            "achieved_goal": np.stack([t + 1, e, zeros], axis=1),
            "desired_goal": np.tile(NEVER, (len(steps), 1)),
        },
        "terminated": last & terminated_last,
        "truncated": last & (not terminated_last),
    }


def _store_episode(
    memory: EpisodicHindsightExperienceReplay, episode: int, length: int, **kwargs: bool
) -> None:
    for t in range(length):
        memory.store(Transition(**_batch([(episode, t, t == length - 1)], **kwargs)))


def _goal_steps(goals: np.ndarray) -> np.ndarray:
    """The step t' whose next state achieved each goal."""
    return goals[:, 0].astype(np.int64) - 1


def _check_relabeled(
    rows: Batch, episode: int, length: int, k: int, chosen: np.ndarray, truncated_last: bool
) -> None:
    """Rows hold the k copies of each step of an episode in order, relabeled with the goals
    of steps ``chosen`` (one per row) of the same episode."""
    steps = np.repeat(np.arange(length), k)
    expected_goals = np.stack([chosen + 1, np.full_like(chosen, episode), 0 * chosen], axis=1)
    np.testing.assert_array_equal(rows.states["desired_goal"], expected_goals)
    np.testing.assert_array_equal(rows.next_states["desired_goal"], expected_goals)
    np.testing.assert_array_equal(rows.states["observation"][:, 1], steps)
    np.testing.assert_array_equal(rows.states["observation"][:, 0], episode)
    np.testing.assert_array_equal(rows.next_states["achieved_goal"][:, 0], steps + 1)
    np.testing.assert_array_equal(rows.actions, steps)
    reached = chosen == steps
    np.testing.assert_array_equal(rows.rewards, np.where(reached, 0.0, -1.0))
    np.testing.assert_array_equal(rows.terminated, reached)
    last = steps == length - 1
    np.testing.assert_array_equal(rows.truncated, last & truncated_last & ~reached)


# -- GoalReward ------------------------------------------------------------------------------


def test_goal_reward_distances_euclidean_and_max_abs() -> None:
    achieved = np.array([[0.0, 0.0], [3.0, 4.0], [1.0, -1.0]])
    desired = np.zeros((3, 2))
    euclidean = GoalReward(distance="euclidean", threshold=2.0)
    max_abs = GoalReward(distance="max_abs", threshold=2.0)
    np.testing.assert_allclose(euclidean.distances(achieved, desired), [0.0, 5.0, np.sqrt(2)])
    np.testing.assert_allclose(max_abs.distances(achieved, desired), [0.0, 4.0, 1.0])
    np.testing.assert_array_equal(euclidean.reached(achieved, desired), [True, False, True])
    # 4 <= 4.5 for max_abs, while the euclidean distance 5 is over the threshold.
    loose_max_abs = GoalReward(distance="max_abs", threshold=4.5)
    loose_euclidean = GoalReward(distance="euclidean", threshold=4.5)
    np.testing.assert_array_equal(loose_max_abs.reached(achieved, desired), [True, True, True])
    np.testing.assert_array_equal(loose_euclidean.reached(achieved, desired), [True, False, True])


def test_goal_reward_threshold_is_inclusive_and_zero_means_exact() -> None:
    exact = GoalReward()
    bits = np.array([[1, 0, 1], [1, 0, 1]], dtype=np.int8)
    goal = np.array([[1, 0, 1], [1, 1, 1]], dtype=np.int8)
    np.testing.assert_array_equal(exact.reached(bits, goal), [True, False])
    at_threshold = GoalReward(threshold=1.0)
    np.testing.assert_array_equal(at_threshold.reached(bits, goal), [True, True])


def test_goal_reward_values_and_dtype() -> None:
    goal_reward = GoalReward(reached_reward=10.0, not_reached_reward=-0.5, threshold=0.1)
    reward = goal_reward.reward(np.array([[0.05], [0.2]]), np.zeros((2, 1)))
    assert reward.dtype == np.float32
    np.testing.assert_array_equal(reward, [10.0, -0.5])


def test_goal_reward_integer_goals_do_not_wrap_around() -> None:
    distance = GoalReward(distance="max_abs").distances(
        np.array([[-128]], dtype=np.int8), np.array([[127]], dtype=np.int8)
    )
    np.testing.assert_array_equal(distance, [255.0])


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"distance": "manhattan"}, "euclidean"),
        ({"threshold": -0.1}, "threshold"),
        ({"threshold": float("nan")}, "threshold"),
    ],
)
def test_goal_reward_refuses_bad_fields(fields: dict, message: str) -> None:
    with pytest.raises(CoachError, match=message):
        GoalReward(**fields)


# -- storing episodes ------------------------------------------------------------------------


def test_nothing_is_stored_before_the_episode_ends() -> None:
    memory = _memory()
    for t in range(3):
        memory.store(Transition(**_batch([(0, t, False)])))
        assert len(memory) == 0
    np.testing.assert_array_equal(memory.open_episode_lengths, [3])
    with pytest.raises(CoachError, match="empty"):
        memory.sample(1)
    memory.store(Transition(**_batch([(0, 3, True)])))
    assert len(memory) == 4 * 5
    np.testing.assert_array_equal(memory.open_episode_lengths, [0])


@pytest.mark.parametrize("method", ["final", "future", "episode", "random"])
@pytest.mark.parametrize("k", [0, 1, 4])
def test_an_episode_is_stored_as_it_happened_then_k_copies_per_step(method: str, k: int) -> None:
    memory = _memory(method, k)
    _store_episode(memory, episode=3, length=5)
    assert len(memory) == 5 * (1 + k)
    regular = memory.get(np.arange(5))
    np.testing.assert_array_equal(regular.states["observation"], [[3, t] for t in range(5)])
    np.testing.assert_array_equal(regular.states["desired_goal"], np.tile(NEVER, (5, 1)))
    np.testing.assert_array_equal(regular.rewards, -1.0)
    np.testing.assert_array_equal(regular.truncated, [False] * 4 + [True])
    hindsight = memory.get(np.arange(5, 5 * (1 + k)))
    np.testing.assert_array_equal(hindsight.actions, np.repeat(np.arange(5), k))
    assert not np.any(hindsight.states["desired_goal"] == NEVER)


def test_k_zero_stores_only_the_regular_transitions_and_draws_nothing() -> None:
    memory = _memory("episode", k=0)
    before = copy.deepcopy(memory.rng)
    _store_episode(memory, episode=0, length=3)
    assert len(memory) == 3
    assert memory.rng.random() == before.random()


def test_final_relabels_every_step_with_the_goal_the_episode_ended_in() -> None:
    length, k = 4, 2
    memory = _memory("final", k)
    _store_episode(memory, episode=5, length=length)
    rows = memory.get(np.arange(length, length * (1 + k)))
    _check_relabeled(rows, 5, length, k, np.full(length * k, length - 1), truncated_last=True)
    # The last step's copies reach their goal: reached reward and terminal, not truncated.
    np.testing.assert_array_equal(rows.rewards[-k:], 0.0)
    assert rows.terminated[-k:].all() and not rows.truncated[-k:].any()
    assert not rows.terminated[:-k].any()


def test_future_relabels_with_goals_of_the_same_or_later_steps() -> None:
    length, k = 6, 4
    memory = _memory("future", k)
    _store_episode(memory, episode=2, length=length)
    rows = memory.get(np.arange(length, length * (1 + k)))
    steps = np.repeat(np.arange(length), k)
    chosen = np.random.default_rng(SEED).integers(steps, length)
    _check_relabeled(rows, 2, length, k, chosen, truncated_last=True)
    assert np.all(_goal_steps(rows.states["desired_goal"]) >= steps)
    assert np.any(_goal_steps(rows.states["desired_goal"]) > steps)
    # Only step T-1 is left to the last step: every copy of it reaches its goal.
    assert rows.terminated[-k:].all()


def test_episode_relabels_with_goals_of_any_step_of_the_episode() -> None:
    length, k = 6, 4
    memory = _memory("episode", k)
    _store_episode(memory, episode=4, length=length)
    rows = memory.get(np.arange(length, length * (1 + k)))
    steps = np.repeat(np.arange(length), k)
    chosen = np.random.default_rng(SEED).integers(0, length, size=length * k)
    _check_relabeled(rows, 4, length, k, chosen, truncated_last=True)
    goal_steps = _goal_steps(rows.states["desired_goal"])
    assert np.any(goal_steps < steps) and np.any(goal_steps > steps)
    # A copy of the truncated last step stays truncated where its goal is not reached.
    assert rows.truncated[-k:].any()


def test_random_relabels_with_goals_from_the_whole_memory() -> None:
    k = 3
    memory = _memory("random", k)
    # The first episode: the memory is empty, so its goals come from the episode itself.
    _store_episode(memory, episode=0, length=4)
    rng = np.random.default_rng(SEED)
    first = rng.integers(0, 4, size=4 * k)
    _check_relabeled(memory.get(np.arange(4, 16)), 0, 4, k, first, truncated_last=True)

    # The second: goals are next-state achieved goals of rows drawn from the 16 stored ones.
    achieved_before = memory.next_states["achieved_goal"][:16].copy()
    _store_episode(memory, episode=1, length=3)
    assert len(memory) == 16 + 3 * (1 + k)
    rows = memory.get(np.arange(19, 28))
    expected = achieved_before[rng.integers(0, 16, size=3 * k)]
    np.testing.assert_array_equal(rows.states["desired_goal"], expected)
    np.testing.assert_array_equal(rows.next_states["desired_goal"], expected)
    # Those goals belong to the earlier episode, which the new one never reaches.
    np.testing.assert_array_equal(rows.states["desired_goal"][:, 1], 0)
    np.testing.assert_array_equal(rows.rewards, -1.0)
    assert not rows.terminated.any()


def test_relabeled_terminations_follow_the_goal_reward() -> None:
    length, k = 4, 3
    keep = GoalReward(terminate_when_reached=False, reached_reward=1.0, not_reached_reward=0.0)
    memory = _memory("future", k, goal_reward=keep)
    _store_episode(memory, episode=0, length=length, terminated_last=True)
    rows = memory.get(np.arange(length, length * (1 + k)))
    steps = np.repeat(np.arange(length), k)
    chosen = np.random.default_rng(SEED).integers(steps, length)
    # Rewards follow the new goal; terminated stays the step's own (only the last step's).
    np.testing.assert_array_equal(rows.rewards, np.where(chosen == steps, 1.0, 0.0))
    np.testing.assert_array_equal(rows.terminated, steps == length - 1)
    assert not rows.truncated.any()
    assert np.any((chosen == steps) & (steps < length - 1))  # reached, yet not terminal


def test_two_envs_keep_their_episodes_apart() -> None:
    k = 2
    memory = _memory("episode", k)
    memory.store(Transition(**_batch([(10, 0, False), (20, 0, False)])))
    memory.store(Transition(**_batch([(10, 1, True), (20, 1, False)])))  # env 0's episode ends
    assert len(memory) == 2 * (1 + k)
    np.testing.assert_array_equal(memory.open_episode_lengths, [0, 2])
    memory.store(Transition(**_batch([(11, 0, False), (20, 2, False)])))
    memory.store(Transition(**_batch([(11, 1, False), (20, 3, True)])))  # env 1's episode ends
    assert len(memory) == 6 * (1 + k)
    np.testing.assert_array_equal(memory.open_episode_lengths, [2, 0])

    rng = np.random.default_rng(SEED)
    first = memory.get(np.arange(0, 2))
    np.testing.assert_array_equal(first.states["observation"], [[10, 0], [10, 1]])
    rows = memory.get(np.arange(2, 6))
    _check_relabeled(rows, 10, 2, k, rng.integers(0, 2, size=2 * k), truncated_last=True)
    second = memory.get(np.arange(6, 10))
    np.testing.assert_array_equal(second.states["observation"], [[20, t] for t in range(4)])
    rows = memory.get(np.arange(10, 18))
    _check_relabeled(rows, 20, 4, k, rng.integers(0, 4, size=4 * k), truncated_last=True)


def test_two_envs_ending_in_the_same_step_are_stored_in_env_order() -> None:
    memory = _memory("final", k=1)
    memory.store(Transition(**_batch([(1, 0, False), (2, 0, False)])))
    memory.store(Transition(**_batch([(1, 1, True), (2, 1, True)])))
    tags = memory.get(np.arange(8)).states["observation"][:, 0]
    np.testing.assert_array_equal(tags, [1, 1, 1, 1, 2, 2, 2, 2])


def test_long_episodes_of_several_envs_keep_every_step() -> None:
    memory = _memory("final", k=1)
    for t in range(40):  # past the room the open episodes start with
        other = (1, t, t == 24) if t < 25 else (2, t - 25, False)
        memory.store(Transition(**_batch([(0, t, t == 39), other])))
    assert len(memory) == (25 + 40) * 2
    np.testing.assert_array_equal(memory.open_episode_lengths, [0, 15])
    first = memory.get(np.arange(25)).states["observation"]
    np.testing.assert_array_equal(first, [[1, t] for t in range(25)])
    second = memory.get(np.arange(50, 90)).states["observation"]
    np.testing.assert_array_equal(second, [[0, t] for t in range(40)])


def test_steps_are_copied_not_kept_as_views() -> None:
    memory = _memory("final", k=1)
    batch = _batch([(0, 0, False)])
    memory.store(Transition(**batch))
    for array in [*batch["state"].values(), *batch["next_state"].values()]:
        array[...] = 99.0
    batch["action"][...] = 99
    memory.store(Transition(**_batch([(0, 1, True)])))
    first = memory.get(np.array([0]))
    np.testing.assert_array_equal(first.states["observation"], [[0, 0]])
    np.testing.assert_array_equal(first.next_states["achieved_goal"], [[1, 0, 0]])
    np.testing.assert_array_equal(first.actions, [0])


def test_extras_are_carried_to_the_relabeled_rows() -> None:
    k = 2
    memory = _memory("future", k, extra_spaces={"discount": spaces.Box(0, 1, (), np.float32)})
    for t in range(3):
        batch = _batch([(0, t, t == 2)])
        memory.store(
            Transition(**batch, extras={"discount": np.array([0.1 * (t + 1)], np.float32)})
        )
    rows = memory.get(np.arange(len(memory)))
    np.testing.assert_allclose(rows.extras["discount"], (rows.actions + 1) * 0.1, rtol=1e-6)
    np.testing.assert_array_equal(rows.actions, [0, 1, 2, 0, 0, 1, 1, 2, 2])
    with pytest.raises(CoachError, match="discount"):
        memory.store(Transition(**_batch([(1, 0, False)])))


def test_an_episode_too_long_for_the_capacity_raises_before_storing() -> None:
    memory = _memory("final", k=4, capacity=10)  # room for 2 steps with 4 copies each
    memory.store(Transition(**_batch([(0, 0, False)])))
    memory.store(Transition(**_batch([(0, 1, False)])))
    with pytest.raises(CoachError, match="capacity of 10"):
        memory.store(Transition(**_batch([(0, 2, True)])))
    np.testing.assert_array_equal(memory.open_episode_lengths, [2])
    assert len(memory) == 0


def test_sampled_rows_are_consistent_transitions() -> None:
    goal_reward = GoalReward()
    memory = _memory("future", k=3, capacity=50)  # wraps around several times
    for episode, length in enumerate([3, 5, 2, 6, 4, 1, 5]):
        _store_episode(memory, episode, length)
    assert len(memory) == 50
    batch = memory.sample(300)
    assert len(batch) == 300
    states, next_states = batch.states, batch.next_states
    episode, step = states["observation"][:, 0], states["observation"][:, 1]
    np.testing.assert_array_equal(states["achieved_goal"][:, :2], np.stack([step, episode], 1))
    np.testing.assert_array_equal(next_states["achieved_goal"][:, 0], step + 1)
    np.testing.assert_array_equal(batch.actions, step)
    np.testing.assert_array_equal(states["desired_goal"], next_states["desired_goal"])
    achieved, desired = next_states["achieved_goal"], next_states["desired_goal"]
    np.testing.assert_array_equal(batch.rewards, goal_reward.reward(achieved, desired))
    np.testing.assert_array_equal(batch.terminated, goal_reward.reached(achieved, desired))
    relabeled = ~np.all(desired == NEVER, axis=1)
    assert relabeled.any() and (~relabeled).any()
    np.testing.assert_array_equal(desired[relabeled, 1], episode[relabeled])
    assert np.all(_goal_steps(desired[relabeled]) >= step[relabeled])


def test_bit_flip_rewards_are_recomputed_as_the_environment_computes_them() -> None:
    env = BitFlipEnv(n_bits=3, max_steps=4)
    memory = EpisodicHindsightExperienceReplayParameters(max_size=500).build(
        env.observation_space, env.action_space, np.random.default_rng(0)
    )
    rng = np.random.default_rng(1)
    observation, _ = env.reset(seed=3)
    for _ in range(40):
        action = rng.integers(0, 3)
        next_observation, reward, terminated, truncated, _ = env.step(action)
        memory.store(
            Transition(
                state={k: v[None] for k, v in observation.items()},
                action=np.array([action]),
                reward=np.array([reward], dtype=np.float32),
                next_state={k: v[None] for k, v in next_observation.items()},
                terminated=np.array([terminated]),
                truncated=np.array([truncated]),
            )
        )
        observation = env.reset()[0] if terminated or truncated else next_observation
    assert len(memory) > 0
    rows = memory.get(memory._live_rows())
    achieved, desired = rows.next_states["achieved_goal"], rows.next_states["desired_goal"]
    assert rows.states["desired_goal"].dtype == np.int8
    np.testing.assert_array_equal(rows.rewards, env.compute_reward(achieved, desired))
    np.testing.assert_array_equal(rows.terminated, np.all(achieved == desired, axis=1))
    assert rows.rewards.max() == 0.0  # hindsight made successes


# -- refusals --------------------------------------------------------------------------------


def test_the_goal_keys_must_be_in_the_observation_space() -> None:
    space = spaces.Dict({"observation": GOAL_SPACE, "goal": GOAL_SPACE})
    with pytest.raises(CoachError, match=r"'achieved_goal'.*\['goal', 'observation'\]"):
        EpisodicHindsightExperienceReplay(10, space, ACTION_SPACE, np.random.default_rng(0))
    memory = EpisodicHindsightExperienceReplay(
        10,
        spaces.Dict({"observation": GOAL_SPACE, "goal": GOAL_SPACE}),
        ACTION_SPACE,
        np.random.default_rng(0),
        achieved_goal_key="observation",
        desired_goal_key="goal",
        hindsight_transitions_per_regular_transition=1,
    )
    assert memory.desired_goal_key == "goal"


def test_goals_of_other_shapes_or_stacked_are_refused() -> None:
    other_shape = spaces.Dict(
        {"achieved_goal": GOAL_SPACE, "desired_goal": spaces.Box(0, 1, (2,), np.float32)}
    )
    with pytest.raises(CoachError, match="one shape"):
        EpisodicHindsightExperienceReplay(10, other_shape, ACTION_SPACE, np.random.default_rng(0))
    stacked = spaces.Dict(
        {"achieved_goal": StackedFrames(GOAL_SPACE, 2), "desired_goal": GOAL_SPACE}
    )
    with pytest.raises(CoachError, match="frame-stacked"):
        EpisodicHindsightExperienceReplay(10, stacked, ACTION_SPACE, np.random.default_rng(0))


@pytest.mark.parametrize("k", [-1, 1.5, True])
def test_k_must_be_an_integer_at_least_zero(k: object) -> None:
    with pytest.raises(CoachError, match="hindsight_transitions_per_regular_transition"):
        _memory(k=k)  # type: ignore[arg-type]


def test_an_unknown_goal_selection_method_lists_the_valid_ones() -> None:
    with pytest.raises(CoachError, match=r"'last'.*'final', 'future', 'episode', 'random'"):
        _memory("last")


def test_a_capacity_below_one_step_and_its_copies_raises() -> None:
    with pytest.raises(CoachError, match="max_size >= 5"):
        _memory(k=4, capacity=4)


def test_a_step_of_another_number_of_envs_raises() -> None:
    memory = _memory()
    memory.store(Transition(**_batch([(0, 0, False), (1, 0, False)])))
    with pytest.raises(CoachError, match="2 envs"):
        memory.store(Transition(**_batch([(0, 1, False)])))


# -- parameters and checkpoints --------------------------------------------------------------


def test_parameters_build_the_memory_they_describe() -> None:
    goal_reward = GoalReward(distance="max_abs", threshold=0.5)
    memory = EpisodicHindsightExperienceReplayParameters(
        max_size=64,
        hindsight_goal_selection_method="episode",
        hindsight_transitions_per_regular_transition=3,
        goal_reward=goal_reward,
    ).build(OBSERVATION_SPACE, ACTION_SPACE, np.random.default_rng(0))
    assert isinstance(memory, EpisodicHindsightExperienceReplay)
    assert memory.capacity == 64
    assert memory.goal_selection_method == "episode"
    assert memory.k == 3
    assert memory.goal_reward is goal_reward
    assert memory.max_episode_steps == 16


def test_state_round_trip_resumes_open_episodes() -> None:
    k = 2
    memory = _memory("future", k)
    _store_episode(memory, episode=0, length=3)
    memory.store(Transition(**_batch([(1, 0, False)])))
    memory.store(Transition(**_batch([(1, 1, False)])))
    state = memory.state_dict()

    restored = _memory("future", k, seed=99)
    restored.rng = copy.deepcopy(memory.rng)
    restored.load_state_dict(state)
    assert len(restored) == len(memory) == 3 * (1 + k)
    np.testing.assert_array_equal(restored.open_episode_lengths, [2])

    for target in (memory, restored):
        target.store(Transition(**_batch([(1, 2, True)])))
    assert len(restored) == len(memory) == 6 * (1 + k)
    expected, got = memory.get(np.arange(len(memory))), restored.get(np.arange(len(memory)))
    for key in OBSERVATION_SPACE.spaces:
        np.testing.assert_array_equal(got.states[key], expected.states[key])
        np.testing.assert_array_equal(got.next_states[key], expected.next_states[key])
    np.testing.assert_array_equal(got.actions, expected.actions)
    np.testing.assert_array_equal(got.rewards, expected.rewards)
    np.testing.assert_array_equal(got.terminated, expected.terminated)
    np.testing.assert_array_equal(got.truncated, expected.truncated)
    np.testing.assert_array_equal(got.states["observation"][9:12], [[1, 0], [1, 1], [1, 2]])


def test_state_dict_of_open_episodes_is_a_copy() -> None:
    memory = _memory("final", k=1)
    memory.store(Transition(**_batch([(0, 0, False)])))
    state = memory.state_dict()
    memory.store(Transition(**_batch([(0, 1, True)])))
    memory.store(Transition(**_batch([(5, 0, False)])))
    np.testing.assert_array_equal(state["open_episodes"][0]["lengths"], [1])
    np.testing.assert_array_equal(
        state["open_episodes"][0]["steps"]["state"]["observation"], [[[0, 0]]]
    )


def test_loading_into_another_capacity_does_not_relabel_again() -> None:
    memory = _memory("future", k=2, capacity=40)
    _store_episode(memory, episode=0, length=3)
    memory.store(Transition(**_batch([(1, 0, False)])))
    larger = _memory("future", k=2, capacity=100)
    larger.load_state_dict(memory.state_dict())
    assert len(larger) == 9
    np.testing.assert_array_equal(
        larger.get(np.arange(9)).states["desired_goal"],
        memory.get(np.arange(9)).states["desired_goal"],
    )
    np.testing.assert_array_equal(larger.open_episode_lengths, [1])


def test_the_state_of_a_plain_replay_loads_without_open_episodes() -> None:
    plain = ExperienceReplay(10, OBSERVATION_SPACE, ACTION_SPACE, np.random.default_rng(0))
    plain.store(Transition(**_batch([(0, 0, True)])))
    memory = _memory(k=1, capacity=10)
    memory.load_state_dict(plain.state_dict())
    assert len(memory) == 1
    assert memory.open_episode_lengths.size == 0


def test_corrupted_or_too_long_open_episodes_are_refused() -> None:
    memory = _memory("final", k=1)
    for t in range(3):
        memory.store(Transition(**_batch([(0, t, False)])))
    state = memory.state_dict()
    with pytest.raises(CoachError, match="3 steps, more than the 2"):
        _memory("final", k=4, capacity=10).load_state_dict(state)
    corrupted = copy.deepcopy(state)
    corrupted["open_episodes"][0]["lengths"] = np.array([5])
    with pytest.raises(CoachError, match="corrupted"):
        _memory("final", k=1).load_state_dict(corrupted)


def test_episodes_interrupted_by_a_restart_are_stored_truncated() -> None:
    memory = _memory(method="final", k=1)
    for t in range(3):
        memory.store(Transition(**_batch([(0, t, False)])))
    memory.end_episodes()
    assert len(memory) == 3 * 2
    np.testing.assert_array_equal(memory.open_episode_lengths, [0])
    regular = memory.get(np.arange(3))
    assert regular.truncated.tolist() == [False, False, True]
    assert not regular.terminated.any()
    memory.end_episodes()  # nothing open: nothing stored
    assert len(memory) == 6


def test_sources_keep_their_episodes_apart() -> None:
    # Two rollout workers whose env copies are both numbered 0 take turns storing.
    memory = _memory("final", k=1)
    first, second = memory.stream(1), memory.stream(2)
    first.store(Transition(**_batch([(0, 0, False)])))
    second.store(Transition(**_batch([(7, 0, False)])))
    first.store(Transition(**_batch([(0, 1, True)])))  # the first source's episode ends: 2 steps
    assert len(memory) == 2 * 2
    np.testing.assert_array_equal(memory.get(np.arange(2)).states["observation"], [[0, 0], [0, 1]])
    state = memory.state_dict()
    restored = _memory("final", k=1)
    restored.load_state_dict(state)
    restored.stream(2).store(Transition(**_batch([(7, 1, True)])))
    np.testing.assert_array_equal(
        restored.get(np.arange(4, 6)).states["observation"], [[7, 0], [7, 1]]
    )
    assert memory.stream(1) is not memory and len(first) == len(memory)


def test_a_state_saved_before_streams_loads_as_the_one_source() -> None:
    memory = _memory("final", k=1)
    memory.store(Transition(**_batch([(0, 0, False)])))
    state = memory.state_dict()
    state["open_episodes"] = state["open_episodes"][0]  # the format of earlier checkpoints
    restored = _memory("final", k=1)
    restored.load_state_dict(state)
    np.testing.assert_array_equal(restored.open_episode_lengths, [1])
