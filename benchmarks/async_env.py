"""Env steps per second of the sync and the async gymnasium adapters, with random actions.

    python -m benchmarks.async_env [--seconds S] [--levels ID ...] [--num-envs N ...] [--short]

For each level and each number of copies, steps `GymEnvironment` (``vectorization="sync"``,
the copies one after another in this process) and `AsyncGymEnvironment` (``"async"``, a
subprocess per copy, stepped in parallel) for ``--seconds`` each with uniformly random
actions drawn beforehand, and prints env steps per second (summed over copies), their ratio,
and how long the async one took to start (its subprocesses up and reset). The first async
start of the process also starts the fork server, which imports Coach once; the machine's
core count, printed with the table, bounds what the async adapter can gain. ``--short``
times CartPole-v1 with 1 and 2 copies for 0.1 s each (for tests).
"""

from __future__ import annotations

import argparse
import os
import time

from gymnasium.vector.utils import batch_space

from coach.environments.parameters import GymEnvironmentParameters

LEVELS = ("BipedalWalker-v3", "HalfCheetah-v5")
NUM_ENVS = (1, 2, 4)


def rate(level: str, num_envs: int, vectorization: str, seconds: float) -> tuple[float, float]:
    """Env steps per second over about ``seconds``, and the seconds to build and reset."""
    start = time.perf_counter()
    env = GymEnvironmentParameters(
        level=level, num_envs=num_envs, vectorization=vectorization
    ).build()
    env.reset(seed=0)
    started = time.perf_counter() - start
    space = batch_space(env.action_space, num_envs)
    space.seed(0)
    actions = [space.sample() for _ in range(200)]  # drawn beforehand, used in turn
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for action in actions:
            env.step(action)
        steps += len(actions) * num_envs
    elapsed = time.perf_counter() - start
    env.close()
    return steps / elapsed, started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="timing per figure")
    parser.add_argument("--levels", nargs="+", default=list(LEVELS))
    parser.add_argument("--num-envs", nargs="+", type=int, default=list(NUM_ENVS))
    parser.add_argument("--short", action="store_true", help="tiny budgets (for tests)")
    args = parser.parse_args()
    if args.short:
        args.seconds, args.levels, args.num_envs = 0.1, ["CartPole-v1"], [1, 2]

    rows = []
    for level in args.levels:
        for num_envs in args.num_envs:
            sync, _ = rate(level, num_envs, "sync", args.seconds)
            async_, started = rate(level, num_envs, "async", args.seconds)
            rows.append((level, num_envs, sync, async_, started))

    print(f"\nrandom actions, {os.cpu_count()} cores, {args.seconds:g} s per figure")
    print(f"{'level':<18} {'envs':>4}  {'sync steps/s':>12}  {'async steps/s':>13}  "
          f"{'async/sync':>10}  {'async start s':>13}")  # fmt: skip
    for level, num_envs, sync, async_, started in rows:
        print(
            f"{level:<18} {num_envs:>4}  {sync:>12,.0f}  {async_:>13,.0f}  "
            f"{async_ / sync:>10.2f}  {started:>13.2f}"
        )
    options = (
        "--short"
        if args.short
        else f"--seconds {args.seconds:g} --levels {' '.join(args.levels)} "
        f"--num-envs {' '.join(map(str, args.num_envs))}"
    )
    print(f"\nreproduce: python -m benchmarks.async_env {options}")


if __name__ == "__main__":
    main()
