"""Training throughput of the batch-RL presets: gradient steps per second over their
datasets, and the time of an epoch's off-policy evaluation.

    python -m benchmarks.batch_rl [--epochs N] [PRESET ...]

Each preset loads its dataset, then trains ``--epochs`` epochs on seed 0 without evaluating
in the environment; the table shows the gradient steps per second of that training and the
mean seconds of one epoch's off-policy estimates (``-`` where the preset makes none). A
preset whose dataset is missing is listed as not measured, with why (``coach -p PRESET``
then gives the commands that make it).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from coach.batch.graph_manager import BatchRLGraphManager
from coach.errors import CoachError
from coach.graph_managers.parameters import RunContext
from coach.presets import list_presets, load_preset


def batch_presets() -> list[str]:
    return [
        n for n in list_presets() if isinstance(load_preset(n).graph_manager, BatchRLGraphManager)
    ]


def measure(name: str, epochs: int) -> tuple[int, float, float | None]:
    """Transitions, gradient steps per second, and seconds per off-policy evaluation."""
    graph = load_preset(name).graph_manager
    assert isinstance(graph, BatchRLGraphManager)
    with tempfile.TemporaryDirectory() as directory:
        graph.create_graph(
            RunContext(seed=0, experiment_dir=Path(directory), quiet=True, progress_seconds=1e9)
        )
        try:
            assert graph.dataset is not None
            training = estimating = 0.0
            for _ in range(epochs):
                start = time.perf_counter()
                graph.train_epoch()
                training += time.perf_counter() - start
                start = time.perf_counter()
                estimated = graph.off_policy_evaluation() is not None
                estimating += time.perf_counter() - start
            rate = graph.levels[0].agent.training_steps / training
            return graph.dataset.total_steps, rate, estimating / epochs if estimated else None
        finally:
            graph.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("presets", nargs="*", default=None)
    parser.add_argument("--epochs", type=int, default=3, help="epochs per preset")
    args = parser.parse_args()
    print(f"\nBatch RL throughput, {args.epochs} epochs per preset, seed 0, 1 thread")
    print(f"{'preset':<28} {'transitions':>11} {'gradient steps/s':>16} {'OPE s/epoch':>11}")
    for name in args.presets or batch_presets():
        try:
            transitions, rate, ope = measure(name, args.epochs)
        except CoachError as error:  # its dataset is missing
            print(f"{name:<28} not measured: {str(error).splitlines()[0]}")
            continue
        ope_text = f"{ope:.2f}" if ope is not None else "-"
        print(f"{name:<28} {transitions:>11,} {rate:>16,.0f} {ope_text:>11}")
    print(f"\nreproduce: python -m benchmarks.batch_rl --epochs {args.epochs}")


if __name__ == "__main__":
    main()
