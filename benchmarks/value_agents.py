"""Training throughput of the value-based CartPole presets.

    python -m benchmarks.value_agents [--steps N] [--short] [PRESET ...]

Each preset heats up, then trains for ``--steps`` env steps on seed 0; the table shows the
env steps and gradient steps per second of that training (acting, storing, learning and
target syncs together; no evaluation). ``--short`` heats up 100 steps and trains 300, one
round of the presets' training cut to 8 gradient steps (for tests).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from coach.core.step_units import EnvironmentSteps
from coach.graph_managers.parameters import RunContext
from coach.parameters import set_parameter
from coach.presets import load_preset

PRESETS = [
    "CartPole_DQN",
    "CartPole_DDQN",
    "CartPole_Dueling_DDQN",
    "CartPole_NStepQ",
    "CartPole_C51",
    "CartPole_QR_DQN",
    "CartPole_Rainbow",
    "CartPole_Bootstrapped_DQN",
]


SHORT = {
    "schedule.heatup_steps": "EnvironmentSteps(100)",
    "agent.algorithm.num_consecutive_training_steps": "8",
}
"""The overrides of ``--short``: a batch or more in the memory, a short training round."""


def measure(name: str, steps: int, overrides: dict[str, str]) -> tuple[float, float]:
    preset = load_preset(name)
    graph = preset.graph_manager
    for path, value in overrides.items():
        set_parameter(graph.parameters(), path, value)
    with tempfile.TemporaryDirectory() as directory:
        graph.create_graph(
            RunContext(seed=0, experiment_dir=Path(directory), quiet=True, progress_seconds=1e9)
        )
        graph.heatup(graph.schedule_params.heatup_steps)
        env_before, gradient_before = graph.env_steps, graph.training_steps
        start = time.perf_counter()
        graph.train_and_act(EnvironmentSteps(steps))
        seconds = time.perf_counter() - start
        graph.close()
    return (graph.env_steps - env_before) / seconds, (
        graph.training_steps - gradient_before
    ) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("presets", nargs="*", default=PRESETS)
    parser.add_argument("--steps", type=int, default=10_000, help="training env steps")
    parser.add_argument("--short", action="store_true", help="300 training steps (for tests)")
    args = parser.parse_args()
    if args.short:
        args.steps = 300
    print(f"\nTraining throughput, {args.steps:,} env steps after heatup, 1 env, seed 0")
    print(f"{'preset':<28} {'env steps/s':>11} {'gradient steps/s':>16}")
    for name in args.presets:
        env_rate, gradient_rate = measure(name, args.steps, SHORT if args.short else {})
        print(f"{name:<28} {env_rate:>11,.0f} {gradient_rate:>16,.0f}")
    options = "--short" if args.short else f"--steps {args.steps}"
    if args.presets != PRESETS:
        options += " " + " ".join(args.presets)
    print(f"\nreproduce: python -m benchmarks.value_agents {options}")


if __name__ == "__main__":
    main()
