"""Throughput of CartPole_DQN against a bare gymnasium loop on the same environment.

    make bench            (or: python -m benchmarks.throughput [--steps N] [--repeats R]
                                   [--train-steps T] [--short])

Prints, from one run: heatup env-steps/s of CartPole_DQN next to a bare loop that steps the
same gymnasium environments with random actions (``env.step(env.action_space.sample())``),
their ratio, with 1 and 8 environment copies; and env-steps/s while DQN trains. Each figure
is the best of ``--repeats`` timings, taken in turn, so that a busy moment of the machine
does not decide a ratio. ``--short`` takes tiny budgets on the same code paths (for tests).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import gymnasium as gym

from coach.core.step_units import EnvironmentSteps
from coach.graph_managers.graph_manager import GraphManager
from coach.graph_managers.parameters import RunContext
from coach.presets import load_preset

PRESET = "CartPole_DQN"
LEVEL = "CartPole-v1"


def bare_loop(num_envs: int, steps: int) -> float:
    """Env steps per second of plain gymnasium copies stepped one after another."""
    envs = [gym.make(LEVEL) for _ in range(num_envs)]
    for i, env in enumerate(envs):
        env.reset(seed=i)
        env.action_space.seed(i)
    done = 0
    start = time.perf_counter()
    while done < steps:
        for env in envs:
            _, _, terminated, truncated, _ = env.step(env.action_space.sample())
            if terminated or truncated:
                env.reset()
        done += num_envs
    return done / (time.perf_counter() - start)


def graph(num_envs: int, directory: Path) -> GraphManager:
    preset = load_preset(PRESET)
    preset.graph_manager.env_params.num_envs = num_envs  # type: ignore[attr-defined]
    return preset.graph_manager.create_graph(
        RunContext(seed=0, experiment_dir=directory, quiet=True, progress_seconds=1e9)
    )


def heatup_rate(g: GraphManager, steps: int) -> float:
    before = g.env_steps
    start = time.perf_counter()
    g.heatup(EnvironmentSteps(steps))
    return (g.env_steps - before) / (time.perf_counter() - start)


def training_rate(g: GraphManager, steps: int) -> tuple[float, float]:
    before, gradient_before = g.env_steps, g.training_steps
    start = time.perf_counter()
    g.train_and_act(EnvironmentSteps(steps))
    seconds = time.perf_counter() - start
    return (g.env_steps - before) / seconds, (g.training_steps - gradient_before) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000, help="env steps per timing")
    parser.add_argument("--repeats", type=int, default=5, help="timings per figure (best kept)")
    parser.add_argument("--train-steps", type=int, default=10_000, help="env steps of training")
    parser.add_argument("--short", action="store_true", help="tiny budgets (for tests)")
    args = parser.parse_args()
    warmup = 1000
    if args.short:
        args.steps, args.repeats, args.train_steps, warmup = 200, 1, 300, 100

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for num_envs in (1, 8):
            g = graph(num_envs, Path(tmp) / f"heatup{num_envs}")
            g.heatup(EnvironmentSteps(warmup))
            bare, coach = 0.0, 0.0
            for _ in range(args.repeats):
                bare = max(bare, bare_loop(num_envs, args.steps))
                coach = max(coach, heatup_rate(g, args.steps))
            g.close()
            target = 0.6 if num_envs == 1 else 0.7  # issue 21: 0.6 of a bare loop with one copy
            rows.append((num_envs, bare, coach, coach / bare, target))

        g = graph(1, Path(tmp) / "train")
        g.heatup(EnvironmentSteps(warmup))  # the memory holds a batch or more
        train_rate, gradient_rate = training_rate(g, args.train_steps)
        g.close()

    print(f"\n{PRESET} heatup vs. a bare gymnasium loop on {LEVEL} (best of {args.repeats})")
    print(f"{'envs':>4}  {'bare loop steps/s':>17}  {'coach heatup steps/s':>20}  "
          f"{'ratio':>5}  {'target':>6}")  # fmt: skip
    for num_envs, bare, coach, ratio, target in rows:
        print(f"{num_envs:>4}  {bare:>17,.0f}  {coach:>20,.0f}  {ratio:>5.2f}  {target:>6.2f}")
    print(f"\n{PRESET} training, 1 env, {args.train_steps:,} env steps after heatup")
    print(f"{'env steps/s':>11}  {'gradient steps/s':>16}")
    print(f"{train_rate:>11,.0f}  {gradient_rate:>16,.0f}")
    options = (
        "--short"
        if args.short
        else f"--steps {args.steps} --repeats {args.repeats} --train-steps {args.train_steps}"
    )
    print(f"\nreproduce: python -m benchmarks.throughput {options}")


if __name__ == "__main__":
    main()
