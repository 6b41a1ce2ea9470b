"""CartPole_ClippedPPO: wall time of a whole run and training throughput per env count.

    python -m benchmarks.on_policy [--steps N] [--short]

Prints the wall time of CartPole_ClippedPPO for its 100,000 env steps as the preset runs
them (training with its evaluations every 5,000 steps), then env steps per second of its
training (collection and updates, no evaluation) over ``--steps`` env steps with 1, 8 and 16
environment copies (the preset's blocks of 32 steps per copy, so bigger blocks with more
copies; a minibatch no bigger than the block), with the gradient steps per second they
took. ``--short`` cuts the whole run to 1,024 env steps with an evaluation of one episode
every 512, and the training to 512 env steps (a block of the 16 copies), for tests.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from coach.core.step_units import EnvironmentSteps
from coach.graph_managers.graph_manager import GraphManager
from coach.graph_managers.parameters import RunContext
from coach.parameters import set_parameter
from coach.presets import load_preset

PRESET = "CartPole_ClippedPPO"
SHORT = {
    "schedule.improve_steps": "EnvironmentSteps(1024)",
    "schedule.steps_between_evaluation_periods": "EnvironmentSteps(512)",
    "schedule.evaluation_steps": "EnvironmentEpisodes(1)",
}
"""The whole run of ``--short``."""


def _graph(
    directory: Path, num_envs: int | None = None, overrides: dict[str, str] | None = None
) -> GraphManager:
    preset = load_preset(PRESET)
    for path, value in (overrides or {}).items():
        set_parameter(preset.graph_manager.parameters(), path, value)
    if num_envs is not None:
        graph = preset.graph_manager
        graph.env_params.num_envs = num_envs  # type: ignore[attr-defined]
        algorithm = graph.agent_params.algorithm  # type: ignore[attr-defined]
        block = graph.agent_params.memory.rollout_length * num_envs  # type: ignore[attr-defined]
        algorithm.batch_size = min(algorithm.batch_size, block)
    return preset.graph_manager.create_graph(
        RunContext(seed=0, experiment_dir=directory, quiet=True, progress_seconds=1e9)
    )


def whole_run(directory: Path, overrides: dict[str, str]) -> tuple[float, int, float]:
    """Seconds of the preset's whole run, its env steps and its last evaluation mean."""
    graph = _graph(directory, overrides=overrides)
    start = time.perf_counter()
    graph.improve()
    seconds = time.perf_counter() - start
    result = (seconds, graph.env_steps, graph.evaluations[-1].mean_reward)
    graph.close()
    return result


def training_rate(directory: Path, num_envs: int, steps: int) -> tuple[float, float]:
    graph = _graph(directory, num_envs)
    start = time.perf_counter()
    graph.train_and_act(EnvironmentSteps(steps))
    seconds = time.perf_counter() - start
    rates = graph.env_steps / seconds, graph.training_steps / seconds
    graph.close()
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50_000, help="env steps per rate")
    parser.add_argument("--short", action="store_true", help="tiny budgets (for tests)")
    args = parser.parse_args()
    if args.short:
        args.steps = 512
    with tempfile.TemporaryDirectory() as tmp:
        seconds, env_steps, reward = whole_run(Path(tmp) / "whole", SHORT if args.short else {})
        rates = [(n, *training_rate(Path(tmp) / f"n{n}", n, args.steps)) for n in (1, 8, 16)]
    print(f"\n{PRESET}, the whole preset{' (cut short)' * args.short} (seed 0)")
    print(f"{'env steps':>9}  {'wall time':>9}  {'last evaluation':>15}")
    print(f"{env_steps:>9,}  {seconds:>8.1f}s  {reward:>15.1f}")
    print(f"\n{PRESET} training, {args.steps:,} env steps")
    print(f"{'envs':>4}  {'env steps/s':>11}  {'gradient steps/s':>16}")
    for num_envs, rate, gradient_rate in rates:
        print(f"{num_envs:>4}  {rate:>11,.0f}  {gradient_rate:>16,.0f}")
    options = "--short" if args.short else f"--steps {args.steps}"
    print(f"\nreproduce: python -m benchmarks.on_policy {options}")


if __name__ == "__main__":
    main()
