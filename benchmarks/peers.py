"""Coach's whole runs against Stable-Baselines3's, with identical hyperparameters.

    python -m benchmarks.peers [--presets NAME ...] [--repeats R] [--float32] [--short]

For each preset (CartPole_DQN, CartPole_ClippedPPO, Pendulum_SAC, Pendulum_TD3 by default)
SB3's run is built from the loaded preset (`benchmarks.sb3_presets`): the same environment
and env copies, random steps first, rounds of env steps and gradient steps, batch, networks
and activations, Adam's learning rate and epsilon, gradient clipping, discount, target
updates, exploration and schedules, and the same evaluations (every N training env steps
after heatup, K episodes, greedy), with ``torch.set_num_threads(1)`` on both sides. The table
of those settings prints Coach's values beside the values read back from the SB3 model
built; a setting that differs fails the benchmark.

Each run is a fresh process (`benchmarks.peer_runs`), Coach and SB3 in turn, ``--repeats``
times: Coach's is the ``coach -p PRESET --seed 0`` command into a temporary folder (its
TensorBoard files, progress.csv, best and last checkpoints included). Two times are
reported, the best of the repeats: the whole process (Python start, imports, building,
training, writing, exit), and training (Coach: `GraphManager.improve`, heatup and
evaluations included; SB3: ``model.learn`` and the last evaluation). The ratio is Coach's
time over SB3's (issue 21's target: 0.65 or less). Env steps, gradient steps, evaluations
and each run's last evaluation reward are printed too; gradient steps and evaluations must
match.

Where the two cannot be identical:

- SB3 counts its rounds from step 0, Coach from the end of heatup: SB3's total is set for
  the same number of rounds (gradient steps), so it may collect a few env steps fewer
  (CartPole_DQN: 49,664 against 50,000; CartPole_ClippedPPO: 99,840 against 100,000, whose
  last 160 Coach never trains on).
- PPO: SB3 clips the gradient norm of actor and critic together (one optimizer), Coach
  each network's on its own; both at 0.5. SB3's orthogonal initialization is turned off, as
  Coach initializes as torch does.
- Coach evaluates on its training env copies and restarts their episodes after each
  evaluation; SB3's EvalCallback has an env of its own (as many copies).
- SAC's update order (SB3: temperature, critics, actor; Coach: critics, actor, temperature)
  and the optimizers' implementations (Coach's fused AdamW without weight decay, SB3's
  Adam) differ; the math of a step does not.
- Pendulum_SAC's and Pendulum_TD3's networks have precision ``"auto"``: where the CPU
  multiplies bfloat16 in hardware (this project's machine does), Coach's learning runs its
  matrix products in bfloat16 (`coach.networks.parameters.NetworkParameters.precision`),
  while SB3 has no such setting and runs float32. ``--float32`` times Coach with every
  network in float32.
- Coach writes TensorBoard, progress.csv and checkpoints; SB3 runs with ``verbose=0`` and no
  logs, as its users run it by default.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.sb3_presets import PeerPlan, plan
from coach.presets import load_preset

ROOT = Path(__file__).resolve().parents[1]
PRESETS = ["CartPole_DQN", "CartPole_ClippedPPO", "Pendulum_SAC", "Pendulum_TD3"]
TARGET = 0.65
SIDES = ("coach", "sb3")

SHORT: dict[str, list[str]] = {
    "CartPole_DQN": [
        "heatup_steps=EnvironmentSteps(200)",
        "improve_steps=EnvironmentSteps(512)",
        "steps_between_evaluation_periods=EnvironmentSteps(256)",
    ],
    "CartPole_ClippedPPO": [
        "improve_steps=EnvironmentSteps(1024)",
        "steps_between_evaluation_periods=EnvironmentSteps(512)",
    ],
    "Pendulum_SAC": [
        "improve_steps=EnvironmentSteps(100)",
        "steps_between_evaluation_periods=EnvironmentSteps(50)",
    ],
    "Pendulum_TD3": [
        "heatup_steps=EnvironmentSteps(200)",
        "improve_steps=EnvironmentSteps(200)",
        "steps_between_evaluation_periods=EnvironmentSteps(100)",
    ],
}
"""``--short``: tiny budgets on the same code paths (schedule overrides, both sides)."""


def short_overrides(preset: str) -> list[str]:
    """The ``-cp`` overrides of ``--short`` for ``preset``: its budgets cut, two episodes
    an evaluation."""
    return [
        f"schedule.{text}"
        for text in [*SHORT.get(preset, []), "evaluation_steps=EnvironmentEpisodes(2)"]
    ]


def float32_overrides(preset: str) -> list[str]:
    """The ``-cp`` overrides of ``--float32``: every network of the preset's agent in float32."""
    agent = load_preset(preset).graph_manager.parameters()["agent"]
    return [f"agent.network_wrappers.{name}.precision=float32" for name in agent.network_wrappers]


def run_side(side: str, peer: PeerPlan, overrides: list[str]) -> dict[str, Any]:
    """One whole run in a fresh process; what it reported and its wall time."""
    module = [sys.executable, "-m", "benchmarks.peer_runs", side]
    with tempfile.TemporaryDirectory(prefix="peers-") as folder:
        if side == "coach":
            command = [*module, peer.preset, folder]
            for override in overrides:
                command += ["-cp", override]
        else:
            command = [*module, json.dumps(peer.spec)]
        # SB3 makes its logger's folder (empty) in the system's temp folder unless told
        # where: here, the run's own, removed with it.
        env = {**os.environ, "SB3_LOGDIR": folder}
        start = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
    lines = [line for line in done.stdout.splitlines() if line.startswith("PEER ")]
    if done.returncode != 0 or len(lines) != 1:
        raise RuntimeError(
            f"{side} run of {peer.preset} failed (exit {done.returncode}):\n"
            f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
        )
    return {"wall": wall, **json.loads(lines[0][5:])}


def _shown(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return "yes" if value is True else "no" if value is False else "none"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, list):
        return "/".join(_shown(v) for v in value)
    return f"{value:,}" if isinstance(value, int) else str(value)


def settings_table(peer: PeerPlan, sb3: dict[str, Any]) -> list[str]:
    """Coach's settings beside SB3's; the names of those that differ."""
    print(f"\n{peer.preset}: Coach against Stable-Baselines3 {peer.algorithm}")
    names = list(dict.fromkeys([*peer.coach, *sb3]))
    rows = [
        (name, _shown(peer.coach.get(name, "(missing)")), _shown(sb3.get(name, "(missing)")))
        for name in names
    ]
    w = [max(len(row[i]) for row in [("setting", "coach", "sb3"), *rows]) for i in range(3)]
    print(f"  {'setting':<{w[0]}}  {'coach':<{w[1]}}  {'sb3':<{w[2]}}  same")
    for name, ours, theirs in rows:
        same = "yes" if ours == theirs else "NO"
        print(f"  {name:<{w[0]}}  {ours:<{w[1]}}  {theirs:<{w[2]}}  {same}")
    return [f"{peer.preset}: {name}" for name, ours, theirs in rows if ours != theirs]


Runs = dict[str, dict[str, list[dict[str, Any]]]]
"""Each preset's runs, by side, in the order they ran."""


def measure(peers: dict[str, PeerPlan], overrides: dict[str, list[str]], repeats: int) -> Runs:
    """Every preset's runs, Coach and SB3 in turn (Coach, SB3, Coach, SB3, ...)."""
    runs: Runs = {p: {s: [] for s in SIDES} for p in peers}
    for preset, peer in peers.items():
        for _ in range(repeats):
            for side in SIDES:
                result = run_side(side, peer, overrides[preset])
                runs[preset][side].append(result)
                print(
                    f"  {preset} {side}: {result['wall']:.1f}s whole process, "
                    f"{result['train_seconds']:.1f}s training",
                    flush=True,
                )
    return runs


def timing_table(runs: Runs) -> None:
    """Both timings of each preset, the best of its repeats, and their ratio."""
    print(f"\n{'preset':<20}  {'timing':<13}  {'coach s':>8}  {'sb3 s':>8}  {'ratio':>6}  target")
    for preset, sides in runs.items():
        for timing, key in (("whole process", "wall"), ("training", "train_seconds")):
            coach, sb3 = (min(r[key] for r in sides[s]) for s in SIDES)
            print(
                f"{preset:<20}  {timing:<13}  {coach:>8.2f}  {sb3:>8.2f}  "
                f"{coach / sb3:>6.2f}  {TARGET:.2f}"
            )


def counts_table(runs: Runs) -> list[str]:
    """What each side ran, and every repeat's last evaluation reward; the presets whose
    gradient steps or evaluations differ between the sides."""
    print(
        f"\n{'preset':<20}  {'side':<5}  {'env steps':>9}  {'gradient steps':>14}  "
        f"{'evaluations':>11}  last evaluation"
    )
    differ = []
    for preset, sides in runs.items():
        counts = {}
        for side in SIDES:
            first = sides[side][0]
            rewards = " ".join(f"{r['final_reward']:.1f}" for r in sides[side])
            counts[side] = (first["gradient_steps"], first["evaluations"])
            print(
                f"{preset:<20}  {side:<5}  {first['env_steps']:>9,}  "
                f"{first['gradient_steps']:>14,}  {first['evaluations']:>11}  {rewards}"
            )
        if counts["coach"] != counts["sb3"]:
            differ.append(f"{preset}: gradient steps and evaluations {counts}")
    return differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", nargs="+", default=PRESETS)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--float32", action="store_true", help="Coach's networks in float32")
    parser.add_argument("--short", action="store_true", help="tiny budgets (for tests)")
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"load average at the start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    overrides = {p: short_overrides(p) if args.short else [] for p in args.presets}
    if args.float32:
        for preset in args.presets:
            overrides[preset] += float32_overrides(preset)
    peers = {p: plan(p, overrides[p]) for p in args.presets}
    runs = measure(peers, overrides, args.repeats)
    problems = []
    for preset, peer in peers.items():
        problems += settings_table(peer, runs[preset]["sb3"][0]["settings"])
    timing_table(runs)
    problems += counts_table(runs)
    load = os.getloadavg()
    print(f"\nbest of {args.repeats}; load average at the end: {load[0]:.2f} {load[1]:.2f}")
    short = (" --short" if args.short else "") + (" --float32" if args.float32 else "")
    print(f"python -m benchmarks.peers{short} --repeats {args.repeats} --presets {' '.join(peers)}")
    if problems:
        sys.exit("the two runs are not identical:\n  " + "\n  ".join(problems))


if __name__ == "__main__":
    main()
