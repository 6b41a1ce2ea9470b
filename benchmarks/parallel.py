"""Collection throughput with rollout workers: env steps per second for n = 1, 2 and 4.

    python -m benchmarks.parallel [--level HalfCheetah-v5] [--seconds 8]

Mujoco_SAC's agent on a MuJoCo task (HalfCheetah by default: a step costs real CPU), one
env copy per worker. Each row times the learner taking blocks into its replay memory while
the workers act, both with random actions (heatup) and with the policy (training with the
gradient steps switched off, so that the workers' acting alone is measured), on both
backends. The single-process run (no -n) is the first row. Figures are wall-clock env
steps per second summed over workers, after one warm-up block each.
"""

from __future__ import annotations

import argparse
import time

from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentSteps
from coach.graph_managers.graph_manager import GraphManager
from coach.graph_managers.parameters import RunContext
from coach.parallel.distributed import DistributedGraphManager, DistributedParameters
from coach.presets import load_preset


def _graph(level: str, workers: int | None, backend: str) -> GraphManager:
    graph = load_preset("Mujoco_SAC").graph_manager
    graph.env_params.level = level
    graph.env_params.level_set = None
    graph.env_params.num_envs = 1
    graph.agent_params.algorithm.num_consecutive_playing_steps = EnvironmentSteps(10**12)
    if workers is not None:
        graph = DistributedGraphManager(
            graph, DistributedParameters(num_workers=workers, backend=backend)
        )
    return graph.create_graph(RunContext(seed=0))


def _rate(graph: GraphManager, phase: RunPhase, seconds: float) -> float:
    """Env steps per second of ``phase`` for about ``seconds``, after a warm-up."""
    run = graph.heatup if phase is RunPhase.HEATUP else graph.train_and_act
    run(EnvironmentSteps(400))
    steps, start = graph.env_steps, time.perf_counter()
    chunk = 2000
    while time.perf_counter() - start < seconds:
        run(EnvironmentSteps(chunk))
    return (graph.env_steps - steps) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--level", default="HalfCheetah-v5")
    parser.add_argument("--seconds", type=float, default=8.0)
    args = parser.parse_args()
    print(f"{args.level}, one env copy per worker, {args.seconds:.0f} s per figure\n")
    print(f"{'backend':<8} {'workers':>7} {'random steps/s':>15} {'x n=1':>6} "
          f"{'policy steps/s':>15} {'x n=1':>6}")  # fmt: skip
    rows = [("-", None)] + [(b, n) for b in ("local", "ray") for n in (1, 2, 4)]
    base: dict[str, tuple[float, float]] = {}
    for backend, workers in rows:
        graph = _graph(args.level, workers, backend)
        try:
            random = _rate(graph, RunPhase.HEATUP, args.seconds)
            policy = _rate(graph, RunPhase.TRAIN, args.seconds)
        finally:
            graph.close()
        if workers == 1:
            base[backend] = (random, policy)
        first = base.get(backend, (random, policy))
        print(f"{backend:<8} {workers or '-':>7} {random:>15,.0f} {random / first[0]:>6.2f} "
              f"{policy:>15,.0f} {policy / first[1]:>6.2f}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
