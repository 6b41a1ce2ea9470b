"""Env steps per second of ``vectorization="envpool"`` against the gymnasium paths.

    python -m benchmarks.envpool [--seconds S] [--rounds R] [--num-envs N] [--short]

For Breakout (Coach's Atari environment: frame skip 4 with max-pooling, no-op starts, sticky
actions, raw 210x160 grayscale frames) and HalfCheetah-v5, each with ``--num-envs`` copies,
steps with uniformly random actions drawn beforehand:

- the bare envpool loop: ``envpool.make_gymnasium`` with the same task and options, its
  ``step`` called directly (what envpool itself costs, without Coach);
- Coach's `EnvpoolEnvironment` (``vectorization="envpool"``), same-step resets and episode
  bookkeeping included;
- Coach's `GymEnvironment` (``"sync"``: the copies one after another in this process);
- Coach's `AsyncGymEnvironment` (``"async"``: a subprocess per copy).

Each figure is the best of ``--rounds`` rounds of ``--seconds``, the four taken in turn in
every round, so that a load that comes and goes on the machine touches them alike; the
table also gives each one's ratio to the sync path. The envpool copies step in as many C++
threads as the process may use cores (at most one per copy). ``--short`` times 2 copies for
0.1 s once (for tests).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

import numpy as np
from gymnasium.vector.utils import batch_space

from coach.environments.atari import AtariEnvironmentParameters
from coach.environments.envpool_environment import EnvpoolEnvironment, import_envpool
from coach.environments.parameters import GymEnvironmentParameters

WAYS = ("bare envpool", "coach envpool", "coach sync", "coach async")


def _parameters(task: str, num_envs: int, vectorization: str) -> GymEnvironmentParameters:
    if task == "Breakout":
        return AtariEnvironmentParameters(
            level="breakout", num_envs=num_envs, vectorization=vectorization
        )
    return GymEnvironmentParameters(
        level="HalfCheetah-v5", num_envs=num_envs, vectorization=vectorization
    )


class _Stepper:
    """One way of stepping the copies, made and reset once, timed in rounds."""

    def __init__(self, task: str, num_envs: int, way: str) -> None:
        self.num_envs = num_envs
        vectorization = {"coach sync": "sync", "coach async": "async"}.get(way, "envpool")
        self.environment = _parameters(task, num_envs, vectorization).build()
        self.environment.reset(seed=0)
        space = batch_space(self.environment.action_space, num_envs)
        space.seed(0)
        self.actions = [space.sample() for _ in range(100)]  # drawn beforehand, used in turn
        self.step: Callable[[object], object] = self.environment.step
        if way == "bare envpool":
            assert isinstance(self.environment, EnvpoolEnvironment)
            pool = self.environment._pool  # the same pool, stepped without Coach
            self.step = pool.step
            # envpool resets an ended copy at its next step by itself.
            self.actions = [np.asarray(a) for a in self.actions]

    def rate(self, seconds: float) -> float:
        steps = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            for action in self.actions:
                self.step(action)
            steps += len(self.actions) * self.num_envs
        return steps / (time.perf_counter() - start)

    def close(self) -> None:
        self.environment.close()


def best_rates(task: str, num_envs: int, seconds: float, rounds: int) -> dict[str, float]:
    """The best env steps/s of each way over ``rounds`` interleaved rounds."""
    steppers = {way: _Stepper(task, num_envs, way) for way in WAYS}
    try:
        best = dict.fromkeys(WAYS, 0.0)
        for _ in range(rounds):
            for way, stepper in steppers.items():
                best[way] = max(best[way], stepper.rate(seconds))
        return best
    finally:
        for stepper in steppers.values():
            stepper.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="timing per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--short", action="store_true", help="tiny budgets (for tests)")
    args = parser.parse_args()
    if args.short:
        args.seconds, args.rounds, args.num_envs = 0.1, 1, 2
    envpool = import_envpool()
    tables = {task: best_rates(task, args.num_envs, args.seconds, args.rounds) for task in
              ("Breakout", "HalfCheetah")}  # fmt: skip

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"\n{args.num_envs} copies, random actions, envpool {envpool.__version__}, {cores} "
        f"cores, load average {os.getloadavg()[0]:.2f}, best of {args.rounds} x "
        f"{args.seconds:g} s"
    )
    print(f"{'task':<12} {'way':<14} {'env steps/s':>12} {'vs sync':>8}")
    for task, rates in tables.items():
        for way in WAYS:
            rate = rates[way]
            print(f"{task:<12} {way:<14} {rate:>12,.0f} {rate / rates['coach sync']:>8.2f}")
    options = (
        "--short"
        if args.short
        else f"--seconds {args.seconds:g} --rounds {args.rounds} --num-envs {args.num_envs}"
    )
    print(f"\nreproduce: python -m benchmarks.envpool {options}")


if __name__ == "__main__":
    main()
