"""Pendulum_SAC: wall time of its 20,000 env steps and its gradient steps per second.

    python -m benchmarks.continuous [--threads N] [--gradient-steps G] [--short]

Runs the preset as it is (100 random steps, then a gradient step on a batch of 256 per env
step, evaluations every 2,000 steps), then times 2,000 gradient steps alone; and the same
gradient-step rate for TD3 and DDPG on their Pendulum presets. ``--short`` cuts the whole
run to 200 env steps with one evaluation episode at its end, and the gradient steps alone to
20 after 300 random steps (for tests).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch

from coach.core.step_units import EnvironmentSteps
from coach.graph_managers.graph_manager import GraphManager
from coach.graph_managers.parameters import RunContext
from coach.parameters import set_parameter
from coach.presets import load_preset

SHORT = {
    "schedule.improve_steps": "EnvironmentSteps(100)",
    "schedule.steps_between_evaluation_periods": "EnvironmentSteps(100)",
    "schedule.evaluation_steps": "EnvironmentEpisodes(1)",
}
"""The whole run of ``--short`` (after the preset's 100 random steps)."""


def _graph(name: str, directory: Path, overrides: dict[str, str] | None = None) -> GraphManager:
    graph = load_preset(name).graph_manager
    for path, value in (overrides or {}).items():
        set_parameter(graph.parameters(), path, value)
    return graph.create_graph(
        RunContext(seed=0, experiment_dir=directory, quiet=True, progress_seconds=1e9)
    )


def whole_run(
    name: str, directory: Path, overrides: dict[str, str]
) -> tuple[float, int, int, float]:
    graph = _graph(name, directory, overrides)
    start = time.perf_counter()
    graph.improve()
    seconds = time.perf_counter() - start
    result = (seconds, graph.env_steps, graph.training_steps, graph.evaluations[-1].mean_reward)
    graph.close()
    return result


def gradient_rate(name: str, directory: Path, steps: int, heatup: int) -> float:
    graph = _graph(name, directory)
    graph.heatup(EnvironmentSteps(heatup))
    agent = graph.top_level.agent
    memory, learner = agent.memory, agent.learner
    assert memory is not None and learner is not None
    batch_size = agent.params.algorithm.batch_size
    learner.learn(memory.sample(batch_size))
    start = time.perf_counter()
    for _ in range(steps):
        learner.learn(memory.sample(batch_size))
    rate = steps / (time.perf_counter() - start)
    graph.close()
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--gradient-steps", type=int, default=2000)
    parser.add_argument("--short", action="store_true", help="tiny budgets (for tests)")
    args = parser.parse_args()
    heatup = 1000
    if args.short:
        args.gradient_steps, heatup = 20, 300  # a batch of 256 in the memory
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        seconds, env_steps, gradient_steps, reward = whole_run(
            "Pendulum_SAC", Path(tmp) / "run", SHORT if args.short else {}
        )
        rates = [
            (name, gradient_rate(name, Path(tmp) / name, args.gradient_steps, heatup))
            for name in ("Pendulum_SAC", "Pendulum_TD3", "Pendulum_DDPG")
        ]
    cut = " (cut short)" * args.short
    print(f"\nPendulum_SAC, the whole preset{cut} (seed 0, {args.threads} thread(s))")
    print(f"{'env steps':>9}  {'gradient steps':>14}  {'wall time':>9}  {'last evaluation':>15}")
    print(f"{env_steps:>9,}  {gradient_steps:>14,}  {seconds:>8.1f}s  {reward:>15.1f}")
    print(f"\ngradient steps alone ({args.gradient_steps:,}, batches of 256)")
    print(f"{'preset':<14}  {'gradient steps/s':>16}")
    for name, rate in rates:
        print(f"{name:<14}  {rate:>16,.0f}")
    options = "--short" if args.short else f"--gradient-steps {args.gradient_steps}"
    print(f"\nreproduce: python -m benchmarks.continuous --threads {args.threads} {options}")


if __name__ == "__main__":
    main()
