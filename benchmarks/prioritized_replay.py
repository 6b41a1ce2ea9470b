"""Speed of prioritized replay: sample a batch and update its priorities, in a full memory.

    python -m benchmarks.prioritized_replay [--capacity N] [--batch-sizes B ...]
                                            [--iterations I] [--repeats R] [--short]

Fills a `PrioritizedExperienceReplay` with CartPole-like transitions (observations of shape
(4,), float32), gives every row a random priority, then times ``sample(B)`` followed by
``update_priorities(batch.indices, td_errors)`` with random TD errors, the pair a DQN-style
learner runs once per gradient step. The uniform `ExperienceReplay`'s ``sample(B)`` on the
same rows is timed beside it, as the cost prioritization adds to. Each figure is the best of
``--repeats`` timings, so that a busy moment of the machine does not decide it. ``--short``
takes tiny budgets on the same code paths (for tests).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from gymnasium import spaces

from coach.core.types import Transition
from coach.memories.experience_replay import ExperienceReplay
from coach.memories.prioritized_experience_replay import PrioritizedExperienceReplay

OBSERVATION_SPACE = spaces.Dict(
    {"observation": spaces.Box(-np.inf, np.inf, shape=(4,), dtype=np.float32)}
)
ACTION_SPACE = spaces.Discrete(2)
FILL_CHUNK = 10_000


def fill(memory: ExperienceReplay, rng: np.random.Generator) -> None:
    """Store ``memory.capacity`` random transitions, a chunk at a time."""
    for start in range(0, memory.capacity, FILL_CHUNK):
        count = min(FILL_CHUNK, memory.capacity - start)
        memory.store(
            Transition(
                state={"observation": rng.standard_normal((count, 4), dtype=np.float32)},
                action=rng.integers(0, 2, size=count),
                reward=np.ones(count, dtype=np.float32),
                next_state={"observation": rng.standard_normal((count, 4), dtype=np.float32)},
                terminated=rng.random(count) < 0.05,
                truncated=np.zeros(count, dtype=bool),
            )
        )


def per_rate(memory: PrioritizedExperienceReplay, batch_size: int, iterations: int) -> float:
    """Seconds per sample + update_priorities pair."""
    td_errors = np.random.default_rng(1).standard_normal((iterations, batch_size))
    start = time.perf_counter()
    for i in range(iterations):
        batch = memory.sample(batch_size)
        memory.update_priorities(batch.indices, td_errors[i])
    return (time.perf_counter() - start) / iterations


def uniform_rate(memory: ExperienceReplay, batch_size: int, iterations: int) -> float:
    """Seconds per uniform sample."""
    start = time.perf_counter()
    for _ in range(iterations):
        memory.sample(batch_size)
    return (time.perf_counter() - start) / iterations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--capacity", type=int, default=1_000_000, help="transitions stored")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[32, 256], help="B")
    parser.add_argument("--iterations", type=int, default=3000, help="pairs per timing")
    parser.add_argument("--repeats", type=int, default=3, help="timings per figure (best kept)")
    parser.add_argument("--short", action="store_true", help="tiny budgets (for tests)")
    args = parser.parse_args()
    warmup = 100
    if args.short:
        args.capacity, args.iterations, args.repeats, warmup = 10_000, 20, 1, 5

    rng = np.random.default_rng(0)
    prioritized = PrioritizedExperienceReplay(
        args.capacity, OBSERVATION_SPACE, ACTION_SPACE, np.random.default_rng(0)
    )
    uniform = ExperienceReplay(
        args.capacity, OBSERVATION_SPACE, ACTION_SPACE, np.random.default_rng(0)
    )
    fill(prioritized, rng)
    fill(uniform, rng)
    # Distinct priorities everywhere, as after some learning, rather than one flat value.
    prioritized.update_priorities(np.arange(args.capacity), rng.standard_normal(args.capacity))

    rows = []
    for batch_size in args.batch_sizes:
        per_rate(prioritized, batch_size, warmup)
        pair = min(per_rate(prioritized, batch_size, args.iterations) for _ in range(args.repeats))
        plain = min(uniform_rate(uniform, batch_size, args.iterations) for _ in range(args.repeats))
        rows.append((batch_size, pair, plain))

    print(
        f"\nPrioritizedExperienceReplay, obs (4,) float32, {args.iterations:,} pairs per timing "
        f"(best of {args.repeats})"
    )
    print(f"{'capacity':>9}  {'batch':>5}  {'sample+update /s':>16}  {'us per sample+update':>20}  "
          f"{'uniform sample us':>17}")  # fmt: skip
    for batch_size, pair, plain in rows:
        print(
            f"{args.capacity:>9,}  {batch_size:>5}  {1 / pair:>16,.0f}  {pair * 1e6:>20,.1f}  "
            f"{plain * 1e6:>17,.1f}"
        )
    sizes = " ".join(str(b) for b in args.batch_sizes)
    options = (
        f"--short --batch-sizes {sizes}"
        if args.short
        else f"--capacity {args.capacity} --batch-sizes {sizes} --iterations {args.iterations} "
        f"--repeats {args.repeats}"
    )
    print(f"\nreproduce: python -m benchmarks.prioritized_replay {options}")


if __name__ == "__main__":
    main()
