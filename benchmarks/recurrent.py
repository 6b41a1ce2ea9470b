"""Recurrent presets next to feed-forward ones on the same environment: acting and
training throughput.

    python -m benchmarks.recurrent [--steps N] [--short]

For each recurrent preset, its feed-forward reference at the same block shape (the same
environment, filters, blocks, minibatches and epochs): the feed-forward preset of that
environment where there is one (``CartPoleNoVel_ClippedPPO``, 64x64 networks), else the
preset with its recurrent layers taken out (the MLP after them kept). Each row: env steps
per second of acting alone (greedy evaluation steps, no storing or learning) and of
training (collection and updates, no evaluation) over ``--steps`` env steps from the start
of a run, and the training wall time per env step as a multiple of the reference's. R2D2
has no feed-forward counterpart (its learning is over sequences): its row stands alone.
``--short`` measures 512 env steps, for tests.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from coach.core.step_units import EnvironmentSteps
from coach.graph_managers.graph_manager import GraphManager
from coach.graph_managers.parameters import RunContext
from coach.presets import load_preset

PAIRS: dict[str, str | None] = {
    "CartPoleNoVel_RecurrentPPO": "CartPoleNoVel_ClippedPPO",
    "PendulumNoVel_RecurrentPPO": None,
}
"""Recurrent presets and their feed-forward reference (``None``: the preset itself with
its recurrent layers taken out)."""
ALONE = ["CartPoleNoVel_R2D2"]
"""Recurrent presets without a twin."""


def _graph(name: str, directory: Path, feed_forward: bool) -> tuple[GraphManager, str]:
    """The preset's graph (with its recurrent layers taken out, for ``feed_forward``) and a
    name for its networks."""
    preset = load_preset(name)
    networks = preset.graph_manager.parameters()["agent"].network_wrappers
    layers = {str(p.recurrent.cell).upper() for p in networks.values() if p.recurrent}
    described = "+".join(sorted(layers)) if layers and not feed_forward else "feed-forward"
    if feed_forward:
        for params in networks.values():
            params.middleware.recurrent = None
    graph = preset.graph_manager.create_graph(
        RunContext(seed=0, experiment_dir=directory, quiet=True, progress_seconds=1e9)
    )
    return graph, described


def rates(name: str, directory: Path, feed_forward: bool, steps: int) -> tuple[str, float, float]:
    """The networks' name, acting env steps/s and training env steps/s."""
    graph, described = _graph(name, directory, feed_forward)
    try:
        heatup = graph.schedule_params.heatup_steps
        if heatup.num_steps:
            graph.heatup(EnvironmentSteps(min(heatup.num_steps, steps)))
        before, start = graph.env_steps, time.perf_counter()
        graph.train_and_act(EnvironmentSteps(steps))
        training = (graph.env_steps - before) / (time.perf_counter() - start)
        start = time.perf_counter()
        graph.evaluate(EnvironmentSteps(steps))
        acting = steps / (time.perf_counter() - start)
    finally:
        graph.close()
    return described, acting, training


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000, help="env steps per rate")
    parser.add_argument("--short", action="store_true", help="tiny budgets (for tests)")
    args = parser.parse_args()
    if args.short:
        args.steps = 512
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, reference in PAIRS.items():
            base = reference or name
            twin = rates(base, Path(tmp) / f"{base}-ff", reference is None, args.steps)
            recurrent = rates(name, Path(tmp) / name, False, args.steps)
            rows.append((base, *twin, "1.00"))
            rows.append((name, *recurrent, f"{twin[2] / recurrent[2]:.2f}"))
        for name in ALONE:
            rows.append((name, *rates(name, Path(tmp) / name, False, args.steps), "-"))
    print(f"\nRecurrent presets and feed-forward references, {args.steps:,} env steps each")
    header = f"{'preset':<28}  {'networks':<12}  {'acting steps/s':>14}  "
    print(header + f"{'training steps/s':>16}  {'time per step x':>15}")
    for name, networks, acting, training, ratio in rows:
        print(f"{name:<28}  {networks:<12}  {acting:>14,.0f}  {training:>16,.0f}  {ratio:>15}")
    options = "--short" if args.short else f"--steps {args.steps}"
    print(f"\nreproduce: python -m benchmarks.recurrent {options}")


if __name__ == "__main__":
    main()
