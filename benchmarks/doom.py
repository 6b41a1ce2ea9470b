"""ViZDoom env steps per second: a bare vizdoom gymnasium loop against Coach's Doom
environment and against Doom_Basic_DQN's random heatup (the screens through the Atari
filters into the frame store).

    python -m benchmarks.doom [--seconds S] [--levels NAME ...] [--short]

For each scenario of the doom level set named (basic and health_gathering by default), at 4
game tics per step: the bare loop steps ``gym.make(id, frame_skip=4)`` with random actions
and resets at episode ends; Coach's environment (`DoomEnvironmentParameters`) steps with
actions drawn beforehand; the heatup runs Doom_Basic_DQN's graph on that scenario (acting at
random, 84x84 luminance, a stack of 4, stored). Each figure is the best of three timings of
``--seconds``, and the ratios are against the bare loop. ``--short`` times basic for 0.2 s,
once (for tests).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

from coach.core.step_units import EnvironmentSteps
from coach.environments import DoomEnvironmentParameters, resolve_level
from coach.graph_managers.parameters import RunContext
from coach.parameters import set_parameter
from coach.presets import load_preset

LEVELS = ("basic", "health_gathering")
FRAME_SKIP = 4


def bare_loop(level: str, seconds: float) -> float:
    """Env steps per second of vizdoom's own gymnasium environment, random actions."""
    env = gym.make(resolve_level("doom", level), frame_skip=FRAME_SKIP)
    env.reset(seed=0)
    env.action_space.seed(0)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
        steps += 1
    rate = steps / (time.perf_counter() - start)
    env.close()
    return rate


def coach_environment(level: str, seconds: float) -> float:
    """Env steps per second of Coach's Doom environment, actions drawn beforehand."""
    env = DoomEnvironmentParameters(level=level, frame_skip=FRAME_SKIP).build()
    env.reset(seed=0)
    actions = np.random.default_rng(0).integers(0, env.action_space.n, (200, 1))  # type: ignore[attr-defined]
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for action in actions:
            env.step(action)
        steps += len(actions)
    rate = steps / (time.perf_counter() - start)
    env.close()
    return rate


def heatup(level: str, seconds: float, directory: Path) -> float:
    """Env steps per second of Doom_Basic_DQN's heatup on ``level``."""
    preset = load_preset("Doom_Basic_DQN")
    set_parameter(preset.graph_manager.parameters(), "environment.level", level)
    graph = preset.graph_manager.create_graph(
        RunContext(seed=0, experiment_dir=directory, quiet=True, progress_seconds=1e9)
    )
    graph.heatup(EnvironmentSteps(100))  # the first episode's start and the filters' warm-up
    block = 200
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        graph.heatup(EnvironmentSteps(block))
        steps += block
    rate = steps / (time.perf_counter() - start)
    graph.close()
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="timing per figure")
    parser.add_argument("--levels", nargs="+", default=list(LEVELS))
    parser.add_argument("--short", action="store_true", help="tiny budgets (for tests)")
    args = parser.parse_args()
    repeats = 3
    if args.short:
        args.seconds, args.levels, repeats = 0.2, ["basic"], 1
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for level in args.levels:
            bare = max(bare_loop(level, args.seconds) for _ in range(repeats))
            coach = max(coach_environment(level, args.seconds) for _ in range(repeats))
            heat = max(
                heatup(level, args.seconds, Path(tmp) / f"{level}{i}") for i in range(repeats)
            )
            rows.append((level, bare, coach, heat))
    print(f"\nViZDoom env steps/s at {FRAME_SKIP} tics a step (best of {repeats})")
    print(f"{'scenario':<17}  {'bare loop':>9}  {'coach env':>9}  {'ratio':>5}  "
          f"{'heatup':>9}  {'ratio':>5}")  # fmt: skip
    for level, bare, coach, heat in rows:
        print(
            f"{level:<17}  {bare:>9,.0f}  {coach:>9,.0f}  {coach / bare:>5.2f}  "
            f"{heat:>9,.0f}  {heat / bare:>5.2f}"
        )
    options = (
        "--short" if args.short else f"--seconds {args.seconds} --levels {' '.join(args.levels)}"
    )
    print(f"\nreproduce: python -m benchmarks.doom {options}")


if __name__ == "__main__":
    main()
