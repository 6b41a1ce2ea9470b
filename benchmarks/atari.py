"""Atari_DQN's observation pipeline against the bare ale-py environment, and replay bytes.

    python -m benchmarks.atari [--steps N] [--capacity C] [--short]

The first table steps Breakout with random actions, one layer added per row: the bare
ale-py environment (``gym.make("ALE/Breakout-v5", frameskip=4, obs_type="grayscale")``,
ALE's own frame skip, no pooling); Coach's Atari environment (frame skip with max-pooling,
no-op starts, sticky actions); that through Atari_DQN's input filter (84x84, a stack of 4,
reward clipping); that stored in Atari_DQN's replay memory; and Atari_DQN's heatup through
the whole graph (random actions, the memory filling). The second table fills a replay
memory of ``--capacity`` Atari transitions (distinct 84x84 frames, stacks of 4 sliding as
in play, an episode end every 1,000 steps) and reports its bytes per transition, from the
arrays and from the process's resident memory. ``--short`` steps 200 times and fills 2,000
transitions, in replays of 2,000 (for tests).
"""

from __future__ import annotations

import argparse
import gc
import resource
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from coach.core.spaces import StackedFrames
from coach.core.step_units import EnvironmentSteps
from coach.core.types import Transition
from coach.environments.atari import AtariEnvironmentParameters
from coach.environments.levels import levels
from coach.filters.atari import atari_input_filter
from coach.graph_managers.parameters import RunContext
from coach.memories.experience_replay import ExperienceReplay
from coach.presets import load_preset


def _rate(step: object, steps: int) -> float:
    start = time.perf_counter()
    for _ in range(steps):
        step()  # type: ignore[operator]
    return steps / (time.perf_counter() - start)


def pipeline_rates(steps: int, replay_size: int) -> list[tuple[str, float]]:
    """Env steps per second of each layer, over ``steps`` steps; the replays hold
    ``replay_size`` transitions."""
    rng = np.random.default_rng(0)
    actions = rng.integers(0, 4, size=steps + 1)
    levels("atari")  # registers the ALE ids
    bare = gym.make("ALE/Breakout-v5", frameskip=4, obs_type="grayscale")
    bare.reset(seed=0)
    counter = iter(range(10**12))

    def bare_step() -> None:
        _, _, terminated, truncated, _ = bare.step(actions[next(counter) % steps])
        if terminated or truncated:
            bare.reset()

    game = AtariEnvironmentParameters(level="breakout").build()
    game.reset(seed=0)
    batch = np.zeros(1, dtype=np.int64)

    def game_step() -> object:
        batch[0] = actions[next(counter) % steps]
        return game.step(batch)

    pipeline = atari_input_filter()
    pipeline.bind(game.observation_space)
    pipeline.start_episodes(game.reset(seed=0).observation, np.arange(1))

    def filtered_step() -> tuple[dict[str, np.ndarray], np.ndarray]:
        response = game_step()
        state = pipeline.filter_observation(response.next_observation)  # type: ignore[attr-defined]
        return state, pipeline.filter_reward(response.reward)  # type: ignore[attr-defined]

    memory = ExperienceReplay(
        replay_size, pipeline.bind(game.observation_space), spaces.Discrete(4), rng
    )
    previous = {"state": filtered_step()[0]}

    def stored_step() -> None:
        state, reward = filtered_step()
        memory.store(
            Transition(
                state=previous["state"],
                action=batch,
                reward=reward,
                next_state=state,
                terminated=np.zeros(1, bool),
                truncated=np.zeros(1, bool),
            )
        )
        previous["state"] = state

    rows = [
        ("bare ale-py ALE/Breakout-v5 (frameskip 4)", _rate(bare_step, steps)),
        ("Coach Atari env (skip 4, max-pool, sticky)", _rate(game_step, steps)),
        ("  + Atari input filter (84x84, stack 4)", _rate(filtered_step, steps)),
        ("  + stored in replay (frames once)", _rate(stored_step, steps)),
    ]
    preset = load_preset("Atari_DQN")
    preset.graph_manager.agent_params.memory.max_size = replay_size  # type: ignore[attr-defined]
    with tempfile.TemporaryDirectory() as directory:
        graph = preset.graph_manager.create_graph(
            RunContext(seed=0, experiment_dir=Path(directory), quiet=True, progress_seconds=1e9)
        )
        start = time.perf_counter()
        graph.heatup(EnvironmentSteps(steps))
        rows.append(("Atari_DQN heatup (whole graph)", steps / (time.perf_counter() - start)))
        graph.close()
    return rows


def _resident_bytes() -> int:
    """The process's resident memory now (Linux), else its peak so far.

    The peak would hide what the replay takes up to the peak an earlier part of the
    benchmark reached (Atari_DQN's heatup replay, freed since)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize()
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def replay_bytes(capacity: int) -> tuple[int, float, float, float]:
    """Fill a replay of ``capacity`` stacked-frame transitions; return the frames written,
    bytes per transition from the arrays and from resident memory, and the fill time."""
    frame = spaces.Box(0, 255, shape=(84, 84), dtype=np.uint8)
    gc.collect()
    before = _resident_bytes()
    memory = ExperienceReplay(
        capacity,
        spaces.Dict({"observation": StackedFrames(frame, 4)}),
        spaces.Discrete(18),
        np.random.default_rng(0),
    )
    base = np.random.default_rng(1).integers(0, 256, size=(84, 84), dtype=np.uint8)
    stack = np.repeat(base[None], 4, axis=0)[None]
    zeros, action, reward = np.zeros(1, bool), np.zeros(1, np.int64), np.zeros(1, np.float32)
    start = time.perf_counter()
    for t in range(capacity):
        new = base.copy()
        new.flat[:8] = np.frombuffer(np.int64(t + 1).tobytes(), np.uint8)  # distinct frames
        next_stack = np.concatenate([stack[:, 1:], new[None, None]], axis=1)
        ended = (t + 1) % 1000 == 0
        memory.store(
            Transition(
                state={"observation": stack},
                action=action,
                reward=reward,
                next_state={"observation": next_stack},
                terminated=np.array([ended]),
                truncated=zeros,
            )
        )
        stack = np.repeat(next_stack[:, -1:], 4, axis=1) if ended else next_stack
    seconds = time.perf_counter() - start
    after = _resident_bytes()
    written = memory.frame_stores["observation"].written
    return written, memory.nbytes() / capacity, (after - before) / capacity, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--capacity", type=int, default=1_000_000)
    parser.add_argument("--short", action="store_true", help="tiny budgets (for tests)")
    args = parser.parse_args()
    replay_size = 100_000
    if args.short:
        args.steps, args.capacity, replay_size = 200, 2000, 2000
        print("python -m benchmarks.atari --short\n")
    else:
        print(f"python -m benchmarks.atari --steps {args.steps} --capacity {args.capacity}\n")
    rows = pipeline_rates(args.steps, replay_size)
    bare = rows[0][1]
    print(f"{'Breakout, random actions':<46} {'env steps/s':>12} {'vs bare':>8}")
    for name, rate in rows:
        print(f"{name:<46} {rate:>12,.0f} {rate / bare:>8.2f}")
    written, array_bytes, rss_bytes, seconds = replay_bytes(args.capacity)
    print(f"\nreplay of {args.capacity:,} Atari transitions (84x84 frames, stacks of 4)")
    print(f"{'frames written':<34} {written:>14,}")
    print(f"{'bytes per transition (arrays)':<34} {array_bytes:>14,.0f}")
    print(f"{'bytes per transition (resident)':<34} {rss_bytes:>14,.0f}")
    print(f"{'total (arrays)':<34} {array_bytes * args.capacity / 1e9:>12.2f} GB")
    print(f"{'fill time':<34} {seconds:>12.1f} s")


if __name__ == "__main__":
    main()
