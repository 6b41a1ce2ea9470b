"""Whole runs of shipped presets, timed as processes: what a part of the base costs a user.

    python -m benchmarks.whole_runs [--presets NAME ... | --presets all] [--steps N]
                                    [--repeats R] [--against DIR [--no-stock]] [--short]

Each case is one ``coach -p NAME -q`` process, from import to exit, and its figure is the
CPU time the process used (user and system, best of ``--repeats``): a part of the base that
costs something at import (a module it loads) or on every step (an update, a write) shows
in it, and the other core's load shows less than in wall-clock time. ``--steps N`` cuts each
run to ``N`` env steps of training and one evaluation episode, and a batch preset's to one
epoch over ``N`` steps of uniform random actions recorded in a temporary Minari folder (the
default, 0, runs the preset's whole schedule over the preset's own dataset).

Two tables:

- **Kept shortcuts**: each part of the base that stays hand-written because the library it
  replaces costs at least 5% of a whole run, run as shipped and with the library's part in
  its place (`STOCK`), in this checkout: Coach's optimizer step and its deferred
  TorchDynamo import (`coach.networks.optimizer`) against ``torch.optim``'s own fused Adam
  and AdamW, torch's ``clip_grad_norm_`` and TorchDynamo imported as torch imports it; and
  Coach's networks running their layers without ``nn.Module.__call__``
  (`coach.networks.heads.run_layer`) against calling every layer.
- **Against a checkout** (``--against DIR``, a checkout of an earlier commit, e.g. ``git
  worktree add /tmp/before COMMIT``): the same runs of this checkout and of DIR's code, for
  a change that replaced a hand-written part with a library's. ``--presets all`` takes
  every shipped preset, and ``--no-stock`` leaves out the kept shortcuts' columns, for a
  table of this checkout against DIR alone.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.batch_rl import record_random_dataset
from coach.batch.graph_manager import BatchRLGraphManager
from coach.batch.ids import local_dataset
from coach.presets import list_presets, load_preset

ROOT = Path(__file__).resolve().parent.parent

PRESETS = ("CartPole_DQN", "Pendulum_TD3", "CartPole_ClippedPPO")
"""The whole runs of the default table: a value, an actor-critic and an on-policy preset."""

SHORT_STEPS = 1_500

_BOOT = """
import sys
variant = sys.argv.pop(1)
if variant != "shipped":
    from benchmarks.whole_runs import STOCK
    STOCK[variant]()
from coach.cli import main
sys.argv[0] = "coach"
main()
"""


def use_stock_optimizer() -> None:
    """Put ``torch.optim``'s own step, ``zero_grad`` and ``clip_grad_norm_`` where Coach's
    optimizer has its own, and take back the seeding that defers TorchDynamo's import: the
    run then steps as a torch user's would (denormals still flushed during the step)."""
    import torch

    from coach.networks import network_wrapper, optimizer

    def step(self: Any, closure: Callable[[], float] | None = None) -> float | None:
        torch.set_flush_denormal(True)
        try:
            return torch.optim.Adam.step(self, closure)  # type: ignore[no-any-return]
        finally:
            torch.set_flush_denormal(False)

    optimizer._LeanStep.step = step  # type: ignore[method-assign]
    del optimizer._LeanStep.zero_grad
    for name in optimizer.WRAPPED:
        fn = getattr(torch.optim.Optimizer, name).__wrapped__
        if hasattr(fn, optimizer.CACHE):
            delattr(fn, optimizer.CACHE)

    def clip(parameters: Any, max_norm: float) -> torch.Tensor:
        return torch.nn.utils.clip_grad_norm_(parameters, max_norm, foreach=True)

    network_wrapper.clip_grad_norm = clip  # type: ignore[attr-defined]


def use_stock_layers() -> None:
    """Run every layer through ``nn.Module.__call__`` where Coach's networks run it with
    `coach.networks.heads.run_layer` (`Layers` becomes a plain ``nn.Sequential``)."""
    from torch import nn

    from coach.networks import heads, model

    shortcut = heads.run_layer

    def call(layer: nn.Module, x: Any) -> Any:
        return layer(x)

    for module in list(sys.modules.values()):
        name = getattr(module, "__name__", "")
        if name.startswith("coach.") and getattr(module, "run_layer", None) is shortcut:
            module.run_layer = call  # type: ignore[attr-defined]
    model.Layers.forward = nn.Sequential.forward  # type: ignore[method-assign]


STOCK: dict[str, Callable[[], None]] = {
    "stock optimizer": use_stock_optimizer,
    "stock layers": use_stock_layers,
}
"""Each kept shortcut's library counterpart, by the name of its column."""


def cut_to(preset: str, steps: int) -> list[str]:
    """The overrides that cut ``preset``'s run to ``steps`` env steps of training and one
    evaluation episode. A batch preset trains one epoch instead, over ``steps`` steps of
    uniform random actions recorded under its dataset's name in the current Minari folder
    where that folder does not hold it yet."""
    graph = load_preset(preset).graph_manager
    length = f"EnvironmentSteps({steps})"
    if isinstance(graph, BatchRLGraphManager):
        if local_dataset(graph.batch_params.dataset) is None:
            record_random_dataset(graph, steps)
        length = "Epochs(1)"
    return [
        "-cp",
        f"schedule.improve_steps={length}",
        "-cp",
        "schedule.evaluation_steps=EnvironmentEpisodes(1)",
    ]


def cpu_seconds(
    preset: str, overrides: list[str], variant: str = "shipped", checkout: Path = ROOT
) -> float:
    """The CPU time of one ``coach -p preset`` process with ``overrides`` (`cut_to`'s, or
    none for the whole schedule), run from ``checkout``'s code."""
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-c", _BOOT, variant, "-p", preset, "-q", "-ep", folder]
        command += overrides
        paths = [str(checkout), os.environ.get("PYTHONPATH", "")]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in paths if p))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(command, cwd=checkout, env=env, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def best(repeats: int, *args: Any, **kwargs: Any) -> float:
    """The least of ``repeats`` measures of `cpu_seconds` (its arguments)."""
    return min(cpu_seconds(*args, **kwargs) for _ in range(repeats))


def _width(column: str) -> int:
    return len(column) + 2


def _cells(column: str, seconds: float, shipped: float) -> str:
    """A variant's seconds and its change against the shipped run's, under its header."""
    change = 100.0 * (seconds - shipped) / shipped
    return f" {seconds:>{_width(column)}.1f} {change:>+7.1f}%"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--presets", nargs="+", default=list(PRESETS))
    parser.add_argument("--steps", type=int, default=0, help="env steps of training (0: all)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--against", type=Path, help="a checkout of an earlier commit")
    parser.add_argument("--no-stock", action="store_true", help="leave out the STOCK columns")
    parser.add_argument("--short", action="store_true", help="one preset, 1,500 steps, once")
    args = parser.parse_args(argv)
    asked = " ".join(args.presets)
    if args.presets == ["all"]:
        args.presets = list_presets()
    variants = [] if args.no_stock else list(STOCK)
    if args.short:
        args.presets, args.steps, args.repeats = args.presets[:1], SHORT_STEPS, 1
    length = f"{args.steps:,} env steps" if args.steps else "whole schedule"
    print(f"Whole runs ({length}): CPU seconds of one process, best of {args.repeats};")
    print("each other column's change is against this checkout as shipped\n")
    against = args.against.resolve() if args.against is not None else None
    name_width = max(24, *(len(preset) for preset in args.presets))
    header = f"{'preset':<{name_width}} {'shipped s':>9}"
    for column in [*variants, *(["before"] if against else [])]:
        header += f" {column + ' s':>{_width(column)}} {'change':>8}"
    if against is not None:
        print(f"before: the code of {against}")
    print(header)
    with tempfile.TemporaryDirectory() as minari:
        if args.steps:  # a batch preset's random dataset goes to a folder of this run's own
            os.environ["MINARI_DATASETS_PATH"] = minari
        for preset in args.presets:
            overrides = cut_to(preset, args.steps) if args.steps else []
            shipped = best(args.repeats, preset, overrides)
            row = f"{preset:<{name_width}} {shipped:>9.1f}"
            for variant in variants:
                row += _cells(variant, best(args.repeats, preset, overrides, variant), shipped)
            if against is not None:
                before = best(args.repeats, preset, overrides, checkout=against)
                row += _cells("before", before, shipped)
            print(row, flush=True)
    options = (
        "--short"
        if args.short
        else f"--presets {asked} --steps {args.steps} --repeats {args.repeats}"
    )
    if args.against is not None:
        options += f" --against {args.against}"
    if args.no_stock:
        options += " --no-stock"
    print(f"\nreproduce: python -m benchmarks.whole_runs {options}")


if __name__ == "__main__":
    main()
