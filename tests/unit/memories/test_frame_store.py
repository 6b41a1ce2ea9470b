"""Unit tests for coach/memories/frame_store.py, through the replay memories that use it.

Streams of frame stacks are made the way an agent makes them: B environment copies, each
frame a unique small image, episodes of random lengths whose first stack repeats the first
frame. A memory whose key is `StackedFrames` must hand back exactly what a memory storing
the whole stacks hands back, while writing each frame once.
"""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from coach.core.spaces import StackedFrames
from coach.core.types import Transition
from coach.memories.experience_replay import ExperienceReplay
from coach.memories.frame_store import FrameStore
from coach.memories.n_step import NStepAccumulator
from coach.memories.prioritized_experience_replay import PrioritizedExperienceReplay

K = 4
FRAME = spaces.Box(0, 255, shape=(6, 5), dtype=np.uint8)
ACTIONS = spaces.Discrete(3)


def _spaces(stacked: bool) -> spaces.Dict:
    frames = StackedFrames(FRAME, K) if stacked else spaces.Box(0, 255, (K, 6, 5), np.uint8)
    return spaces.Dict({"observation": frames, "position": spaces.Box(-1e9, 1e9, (1,))})


class FrameStream:
    """B envs stepping: their frame stacks, with episodes ending at random."""

    def __init__(self, num_envs: int, seed: int, mean_episode: float = 12.0) -> None:
        self.rng = np.random.default_rng(seed)
        self.num_envs = num_envs
        self.mean_episode = mean_episode
        self.serial = 0
        self.frames_made = 0
        self.episodes = 0
        self.stacks = np.stack([self._first() for _ in range(num_envs)])

    def _frame(self) -> np.ndarray:
        self.serial += 1
        self.frames_made += 1
        # A unique frame: its serial number written into the first bytes.
        frame = self.rng.integers(0, 256, size=FRAME.shape, dtype=np.uint8)
        frame.flat[:4] = np.frombuffer(np.uint32(self.serial).tobytes(), np.uint8)
        return frame

    def _first(self) -> np.ndarray:
        return np.repeat(self._frame()[None], K, axis=0)

    def step(self) -> dict[str, np.ndarray]:
        """One step of every env, as the keyword arguments of `Memory.store`."""
        state = self.stacks
        next_state = np.stack([np.concatenate([s[1:], self._frame()[None]]) for s in state])
        ended = self.rng.random(self.num_envs) < 1.0 / self.mean_episode
        terminated = ended & (self.rng.random(self.num_envs) < 0.5)
        truncated = ended & ~terminated
        self.stacks = next_state.copy()
        for i in np.flatnonzero(ended):
            self.stacks[i] = self._first()
            self.episodes += 1
        position = state[:, -1].reshape(self.num_envs, -1)[:, :4].copy().view(np.uint32)
        return {
            "state": {"observation": state, "position": position.astype(np.float32)},
            "action": self.rng.integers(0, 3, size=self.num_envs),
            "reward": self.rng.standard_normal(self.num_envs).astype(np.float32),
            "next_state": {"observation": next_state, "position": position + 1.0},
            "terminated": terminated,
            "truncated": truncated,
        }


def _pair(capacity: int, prioritized: bool = False) -> tuple[ExperienceReplay, ExperienceReplay]:
    kind = PrioritizedExperienceReplay if prioritized else ExperienceReplay
    return (
        kind(capacity, _spaces(True), ACTIONS, np.random.default_rng(7)),
        kind(capacity, _spaces(False), ACTIONS, np.random.default_rng(7)),
    )


def _assert_same_batches(stacked: ExperienceReplay, whole: ExperienceReplay) -> None:
    assert len(stacked) == len(whole)
    for _ in range(5):
        a, b = stacked.sample(64), whole.sample(64)
        np.testing.assert_array_equal(a.indices, b.indices)
        for key in ("observation", "position"):
            np.testing.assert_array_equal(a.states[key], b.states[key])
            np.testing.assert_array_equal(a.next_states[key], b.next_states[key])
        np.testing.assert_array_equal(a.actions, b.actions)
        np.testing.assert_array_equal(a.rewards, b.rewards)
        np.testing.assert_array_equal(a.terminated, b.terminated)


@pytest.mark.parametrize("num_envs", [1, 3])
@pytest.mark.parametrize("prioritized", [False, True], ids=["uniform", "prioritized"])
def test_samples_equal_a_memory_of_whole_stacks(num_envs: int, prioritized: bool) -> None:
    stacked, whole = _pair(500, prioritized)
    stream = FrameStream(num_envs, seed=1)
    for _ in range(400):  # wraps the ring more than once
        step = stream.step()
        stacked.store(Transition(**step))
        whole.store(Transition(**step))
    _assert_same_batches(stacked, whole)


def test_each_frame_is_written_once() -> None:
    stacked, _ = _pair(10_000)
    stream = FrameStream(2, seed=2)
    for _ in range(1000):
        stacked.store(Transition(**stream.step()))
    store = stacked.frame_stores["observation"]
    # Every frame the envs produced, each once: one per step and one per new episode.
    assert store.written == stream.frames_made
    assert stream.frames_made == 2 * 1000 + 2 + stream.episodes


def test_n_step_transitions_share_frames_too() -> None:
    memory, whole = _pair(5000)
    stream = FrameStream(2, seed=3)
    accumulators = [NStepAccumulator(3, 0.9, 2), NStepAccumulator(3, 0.9, 2)]
    for _ in range(600):
        step = stream.step()
        for target, accumulator in zip((memory, whole), accumulators, strict=True):
            ready = accumulator.add(
                Transition(
                    state=step["state"],
                    action=step["action"],
                    reward=step["reward"],
                    next_state=step["next_state"],
                    terminated=step["terminated"],
                    truncated=step["truncated"],
                )
            )
            if ready is not None:
                ready.extras = {}
                target.store(ready)
    assert memory.frame_stores["observation"].written == stream.frames_made
    _assert_same_batches(memory, whole)


@pytest.mark.parametrize("prioritized", [False, True], ids=["uniform", "prioritized"])
def test_when_frames_outrun_transitions_the_oldest_transitions_are_forgotten(
    prioritized: bool,
) -> None:
    kind = PrioritizedExperienceReplay if prioritized else ExperienceReplay
    memory = kind(300, _spaces(True), ACTIONS, np.random.default_rng(0))
    store = FrameStore(300, StackedFrames(FRAME, K), window=20)
    memory.frame_stores["observation"] = store
    assert store.num_frames == 300 + 40
    stream = FrameStream(1, seed=4, mean_episode=1.5)  # about 1.7 frames per transition
    for _ in range(2000):
        memory.store(Transition(**stream.step()))
        assert len(memory) < 300
    # Every live row still reads back the frames it was stored with.
    batch = memory.get(memory._live_rows())
    frames = batch.states["observation"][:, -1].reshape(len(batch.rewards), -1)[:, :4]
    np.testing.assert_array_equal(
        frames.copy().view(np.uint32)[:, 0], batch.states["position"][:, 0]
    )
    assert np.all(np.diff(batch.states["position"][:, 0]) > 0)
    if prioritized:
        live = np.zeros(300, dtype=bool)
        live[memory._live_rows()] = True
        assert np.all(memory.sum_tree[np.flatnonzero(~live)] == 0)
        assert set(memory.sample(256).indices) <= set(np.flatnonzero(live))


@pytest.mark.parametrize("prioritized", [False, True], ids=["uniform", "prioritized"])
def test_state_dict_round_trip_continues_exactly(prioritized: bool) -> None:
    stacked, _ = _pair(300, prioritized)
    stream = FrameStream(2, seed=5)
    for _ in range(250):
        stacked.store(Transition(**stream.step()))
    restored, _ = _pair(300, prioritized)
    restored.load_state_dict(stacked.state_dict())
    for _ in range(50):
        step = stream.step()
        stacked.store(Transition(**step))
        restored.store(Transition(**step))
    _assert_same_batches(restored, stacked)
    assert (
        restored.frame_stores["observation"].written == stacked.frame_stores["observation"].written
    )


def test_state_dict_into_another_capacity_keeps_the_newest_transitions() -> None:
    source, whole = _pair(300)
    stream = FrameStream(2, seed=6)
    for _ in range(200):
        step = stream.step()
        source.store(Transition(**step))
        whole.store(Transition(**step))
    larger, _ = _pair(1000)
    larger.load_state_dict(source.state_dict())
    reference_whole = ExperienceReplay(1000, _spaces(False), ACTIONS, np.random.default_rng(7))
    reference_whole.load_state_dict(whole.state_dict())
    _assert_same_batches(larger, reference_whole)


def test_bytes_per_atari_transition() -> None:
    frame = spaces.Box(0, 255, shape=(84, 84), dtype=np.uint8)
    capacity = 200_000
    memory = ExperienceReplay(
        capacity,
        spaces.Dict({"observation": StackedFrames(frame, 4)}),
        spaces.Discrete(18),
        np.random.default_rng(0),
    )
    per_transition = memory.nbytes() / capacity
    # One 7,056-byte frame, 1/32 of a frame of slack, slots, action, reward and flags.
    assert 7056 < per_transition < 7500
