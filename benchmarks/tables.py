"""Every throughput benchmark, one after another: what ``make bench`` prints.

    make bench              (or: python -m benchmarks.tables [MODULE ...] [--save DIR]
                                       [--short])

Each module runs in a process of its own (``python -m benchmarks.MODULE``) on a machine that
should be doing nothing else; its tables stream to the terminal as it prints them. With
``--save DIR`` each module's output is also written to ``DIR/MODULE.txt``: ``make
benchmarks-docs`` saves them under ``docs/benchmarks/throughput``, where the documentation's
throughput page is built from.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

MODULES = (
    "throughput",
    "floor",
    "peers",
    "prioritized_replay",
    "value_agents",
    "on_policy",
    "continuous",
    "atari",
    "parallel",
    "async_env",
    "envpool",
    "batch_rl",
    "recurrent",
    "multi_agent",
    "doom",
    "dnd",
    "whole_runs",
)
"""The benchmark modules of ``make bench``, in the order they run."""


def run(module: str, arguments: list[str]) -> tuple[int, str]:
    """Run ``benchmarks.MODULE`` with ``arguments``, echoing its output; its exit status and
    standard output (its tables; what libraries warn of goes to standard error, shown, not
    saved)."""
    process = subprocess.Popen(
        [sys.executable, "-m", f"benchmarks.{module}", *arguments],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    lines = []
    for line in process.stdout:
        print(line, end="", flush=True)
        lines.append(line)
    return process.wait(), "".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help=f"some of: {', '.join(MODULES)} (all)")
    parser.add_argument("--save", type=Path, metavar="DIR", help="also write DIR/MODULE.txt")
    parser.add_argument(
        "--short", action="store_true", help="tiny budgets, each module's own --short (a check)"
    )
    args = parser.parse_args()
    unknown = [m for m in args.modules if m not in MODULES]
    if unknown:
        parser.error(f"no benchmark module {', '.join(unknown)}; the modules: {', '.join(MODULES)}")
    failed = []
    for module in args.modules or MODULES:
        started = time.perf_counter()
        print(f"== benchmarks.{module}", flush=True)
        status, output = run(module, ["--short"] if args.short else [])
        seconds = time.perf_counter() - started
        print(f"== benchmarks.{module}: {seconds:.0f} s, exit status {status}\n", flush=True)
        if status:
            failed.append(module)
        elif args.save is not None:
            args.save.mkdir(parents=True, exist_ok=True)
            (args.save / f"{module}.txt").write_text(output)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
