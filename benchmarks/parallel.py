"""Collection throughput with rollout workers: env steps per second for n = 1, 2 and 4.

    python -m benchmarks.parallel [--level HalfCheetah-v5] [--rounds 8] [--seconds 1.5]
                                  [--backends local ray] [--short]

Mujoco_SAC's agent on a MuJoCo task (HalfCheetah by default: a step costs real CPU), one
env copy per worker. Each figure times the learner taking blocks into its replay memory while
the workers act, both with random actions (heatup) and with the policy (training with the
gradient steps switched off, so that the workers' acting alone is measured), on both
backends; the single-process run (no -n) is the first row of the local backend. The "bare"
rows are N processes stepping the plain gymnasium environment with random actions, without
Coach: how far the machine itself scales from one busy core to two.

The speed of this kind of virtual machine drifts by 30% or more within a minute (two plain
step loops measured one after the other differ that much), so figures taken one after the
other would compare the machine's moods as much as the worker counts. The runs of one
backend are therefore built side by side and measured in turns: every round gives each of
them a slice of about ``--seconds``; a figure is the steps of all its slices over their
time, and ``x n=1`` its ratio to the n = 1 figure. ``worst`` is the lowest ratio that any one
round gave. ``--short`` (for tests) measures n = 1 and 2 in one round of ~0.05 s slices,
after 100 warm-up steps.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection

from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentSteps
from coach.graph_managers.graph_manager import GraphManager
from coach.graph_managers.parameters import RunContext
from coach.parallel.distributed import DistributedGraphManager
from coach.parallel.parameters import BACKENDS, DistributedParameters
from coach.presets import load_preset

WORKERS = (1, 2, 4)
PHASES = (RunPhase.HEATUP, RunPhase.TRAIN)


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


class _Bare:
    """``workers`` processes that step the plain gymnasium environment with random actions,
    without Coach: the machine's own scaling, to read the workers' figures against."""

    def __init__(self, level: str, workers: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.env_steps = 0
        self.pipes = []
        for rank in range(workers):
            ours, theirs = context.Pipe()
            context.Process(target=_bare_steps, args=(theirs, level, rank), daemon=True).start()
            self.pipes.append(ours)
        for pipe in self.pipes:
            pipe.recv()  # ready

    def heatup(self, steps: EnvironmentSteps) -> None:
        share = -(-steps.num_steps // len(self.pipes))
        for pipe in self.pipes:
            pipe.send(share)
        self.env_steps += sum(pipe.recv() for pipe in self.pipes)

    train_and_act = heatup

    def close(self) -> None:
        for pipe in self.pipes:
            pipe.send(None)


def _bare_steps(pipe: Connection, level: str, seed: int) -> None:
    import gymnasium as gym

    env = gym.make(level)
    env.reset(seed=seed)
    env.action_space.seed(seed)
    pipe.send("ready")
    while (steps := pipe.recv()) is not None:
        for _ in range(steps):
            _, _, terminated, truncated, _ = env.step(env.action_space.sample())
            if terminated or truncated:
                env.reset()
        pipe.send(steps)


def _run(graph: GraphManager | _Bare, phase: RunPhase, steps: int) -> float:
    """Seconds that ``steps`` env steps of ``phase`` take."""
    run = graph.heatup if phase is RunPhase.HEATUP else graph.train_and_act
    start = time.perf_counter()
    run(EnvironmentSteps(steps))
    return time.perf_counter() - start


@contextmanager
def _runtime(backend: str, graphs: int) -> Iterator[None]:
    """For Ray, one local runtime with room for every graph's workers at once."""
    if backend != "ray":
        yield
        return
    import ray

    from coach.parallel.ray_workers import _loopback_only

    _loopback_only()
    ray.init(
        address="local",
        num_cpus=max(os.cpu_count() or 1, graphs),
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )
    try:
        yield
    finally:
        ray.shutdown()


Row = tuple[str, int | None]
"""A row of the table: its backend ("none" for one process, "bare" for `_Bare`) and workers."""


def _measure(
    graphs: dict[Row, GraphManager | _Bare], rounds: int, seconds: float, warmup: int
) -> dict[tuple[Row, RunPhase], list[tuple[int, float]]]:
    """(steps, seconds) of each graph's slice in each round, for both phases; ``warmup``
    steps first, then as many again to size a slice (at least ``warmup // 5`` steps)."""
    slices: dict[tuple[Row, RunPhase], list[tuple[int, float]]] = {}
    for phase in PHASES:
        steps: dict[Row, int] = {}
        for key, graph in graphs.items():  # warm-up, then the size of a slice
            _run(graph, phase, warmup)
            rate = warmup / _run(graph, phase, warmup)
            steps[key] = max(warmup // 5, int(round(rate * seconds, -2)))
        for _ in range(rounds):
            for key, graph in graphs.items():
                before = graph.env_steps
                elapsed = _run(graph, phase, steps[key])
                slices.setdefault((key, phase), []).append((graph.env_steps - before, elapsed))
    return slices


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--level", default="HalfCheetah-v5")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=1.5, help="seconds per slice")
    parser.add_argument("--backends", nargs="+", default=["local", "ray"], choices=BACKENDS)
    parser.add_argument(
        "--short", action="store_true", help="n = 1, 2; one round of tiny slices (for tests)"
    )
    args = parser.parse_args()
    workers: tuple[int, ...] = WORKERS
    warmup = 1000
    if args.short:
        workers, warmup, args.rounds, args.seconds = (1, 2), 100, 1, 0.05
    print(
        f"{args.level}, one env copy per worker; {args.rounds} rounds of ~{args.seconds:g} s "
        f"slices, the runs of a backend measured in turns; backend none is the graph stepping "
        f"its own env copy, bare as many plain gymnasium processes without Coach\n"
    )
    print(f"{'backend':<8} {'workers':>7} {'random steps/s':>15} {'x n=1':>6} {'worst':>6} "
          f"{'policy steps/s':>15} {'x n=1':>6} {'worst':>6}")  # fmt: skip
    for backend in ["bare", *args.backends]:
        rows: list[Row] = [(backend, n) for n in workers]
        if backend == "local":
            rows.insert(0, ("none", None))
        with _runtime(backend, sum(workers)):
            graphs: dict[Row, GraphManager | _Bare] = {}
            try:
                for row in rows:
                    name, count = row
                    graphs[row] = (
                        _Bare(args.level, count or 1)
                        if name == "bare"
                        else _graph(args.level, count, backend)
                    )
                slices = _measure(graphs, args.rounds, args.seconds, warmup)
            finally:
                for graph in graphs.values():
                    graph.close()
        for row in rows:
            cells = []
            for phase in PHASES:
                own, first = slices[(row, phase)], slices[((backend, 1), phase)]
                rate = sum(s for s, _ in own) / sum(t for _, t in own)
                base = sum(s for s, _ in first) / sum(t for _, t in first)
                worst = min(
                    (s / t) / (s1 / t1) for (s, t), (s1, t1) in zip(own, first, strict=True)
                )
                cell = f"{rate:>15,.0f} {rate / base:>6.2f} {worst:>6.2f}"
                cells.append(cell if backend != "bare" or phase is RunPhase.HEATUP else "")
            print(f"{row[0]:<8} {row[1] or '-':>7} {' '.join(cells)}", flush=True)
    options = f"--level {args.level} --backends {' '.join(args.backends)}"
    if not args.short:
        options += f" --rounds {args.rounds} --seconds {args.seconds:g}"
    print(f"\nreproduce: python -m benchmarks.parallel {options}{' --short' * args.short}")


if __name__ == "__main__":
    main()
