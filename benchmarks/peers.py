"""Coach's whole runs against Stable-Baselines3's, with identical hyperparameters: timed, and
compared on what they learn.

    python -m benchmarks.peers [--presets NAME ...] [--repeats R] [--float32] [--short]
    python -m benchmarks.peers --learning [--presets NAME ...] [--seeds 0-9] [--jobs N]
                               [--records PATH] [-cp OVERRIDE ...]

For each preset SB3's run is built from the loaded preset (`benchmarks.sb3_presets`): the
same environment and env copies, random steps first, rounds of env steps and gradient steps
(or rollout blocks), batch, networks and activations, the optimizer (Adam), its learning
rate (and its schedule) and epsilon, gradient clipping, discount, target updates,
exploration and schedules, and the same evaluations (every N training env steps after
heatup, K episodes, greedy), with ``torch.set_num_threads(1)`` on both sides. The table of
those settings prints Coach's values beside the values read back from the SB3 model built;
a setting that differs fails the benchmark.

Each run is a fresh process (`benchmarks.peer_runs`). Coach's is the ``coach -p PRESET
--seed K`` command into a temporary folder (its TensorBoard files, progress.csv, best and
last checkpoints included); SB3's is seeded with the same K (``seed=K``, its env copies
K, K + 1, ...).

The timing (CartPole_DQN, CartPole_ClippedPPO, Pendulum_SAC, Pendulum_TD3 by default) runs
Coach and SB3 in turn on seed 0, ``--repeats`` times. Two times are reported, the best of
the repeats: the whole process (Python start, imports, building, training, writing, exit),
and training (Coach: `GraphManager.improve`, heatup and evaluations included; SB3:
``model.learn`` and the last evaluation). The ratio is Coach's time over SB3's (issue 21's
target: 0.65 or less). Env steps, gradient steps, evaluations and each run's last
evaluation reward are printed too; gradient steps and evaluations must match.

The learning comparison (``--learning``; CartPole_DQN, CartPole_ClippedPPO, CartPole_A2C,
Pendulum_SAC, Pendulum_TD3 by default) runs each (library, preset, seed) case, on seeds 0 to
9 unless ``--seeds`` says others, ``--jobs`` cases at a time, and judges the final agent:
the agent at the end of the whole run, evaluated greedily on 20 fresh episodes of a fresh
environment seeded with the training seed plus 10,000 (`tests.learning.golden_case`'s
``SEED_OFFSET``), after the run in the run's own process:

- Coach's final agent is the last checkpoint the run wrote (the ``coach`` command saves one
  as it ends), evaluated by the golden runner's own evaluation
  (`tests.learning.golden_case.evaluate_checkpoint`: the checkpoint loaded into a freshly
  built graph of the preset, 20 episodes split over its env copies), the figure of the
  golden table's "final 20 eps" column;
- SB3's is the model after ``model.learn`` returns, evaluated by
  ``stable_baselines3.common.evaluation.evaluate_policy(model, env, n_eval_episodes=20,
  deterministic=True)`` on a ``make_vec_env`` of the preset's env copies seeded with the
  same seed (copy ``i`` with it plus ``i``; episodes split over the copies too).

Each finished case is recorded at once in ``--records`` (``docs/benchmarks/peer_learning.json``;
`benchmarks.peer_learning` says what a record holds) with the hash of what its side's run
is built from (Coach's resolved parameters, SB3's spec): a case recorded with the same hash
is not run again, so an interrupted comparison resumes where it stopped (the cases running
when it was stopped are run again), and a preset whose parameters changed is run again.
Then the table of the records: per preset, each library's interquartile mean of its final
agents with its 95% stratified-bootstrap confidence interval (rliable), and the fraction of
seeds whose final agent holds the preset's threshold (``validation.min_reward``); the
documentation's comparison page shows the same table, made from the committed records.
``-cp`` overrides apply to every preset, on both sides (for short tests: such records are
marked so in the table).

Where the two cannot be identical:

- SB3 counts its rounds from step 0, Coach from the end of heatup: SB3's total is set for
  the same number of rounds (gradient steps), so it may collect a few env steps fewer
  (CartPole_DQN: 49,664 against 50,000; CartPole_ClippedPPO: 99,840 against 100,000, whose
  last 160 Coach never trains on), and its first round comes after fewer steps of its own
  policy (CartPole_DQN: 24 past the 1,000 random ones, Coach's after 256).
- A learning rate schedule is set before each round on both sides, over Coach's training
  env steps and over SB3's env steps less those before its first round: the same rate at
  the same round (the table compares rounds 1, the middle and the last), not at the same
  env step between rounds. SAC with a schedule is not mapped (SB3 sets the scheduled rate
  on the temperature's optimizer too, Coach keeps ``temperature_learning_rate`` there).
- PPO and A2C: SB3 clips the gradient norm of actor and critic together (one optimizer),
  Coach each network's on its own; both at 0.5. SB3's orthogonal initialization is turned
  off, as Coach initializes as torch does. SB3's A2C is given Adam with Coach's epsilon
  instead of its default RMSprop.
- Coach evaluates on its training env copies and restarts their episodes after each
  evaluation; SB3's EvalCallback has an env of its own (as many copies). The final agents'
  fresh environments follow the same seeding rule, but each library draws its episodes'
  starts its own way: the two sides never play the same 20 episodes.
- SAC's update order (SB3: temperature, critics, actor; Coach: critics, actor, temperature)
  and the optimizers' implementations (Coach's fused AdamW without weight decay, SB3's
  Adam) differ; the math of a step does not.
- Pendulum_SAC's and Pendulum_TD3's networks have precision ``"auto"``: where the CPU
  multiplies bfloat16 in hardware (this project's machine does), Coach's learning runs its
  matrix products in bfloat16 (`coach.networks.parameters.NetworkParameters.precision`),
  while SB3 has no such setting and runs float32. ``--float32`` times Coach with every
  network in float32 (the learning comparison runs the presets as they are).
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
from concurrent.futures import ThreadPoolExecutor, as_completed
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from benchmarks.learning_curves import commit
from benchmarks.peer_learning import (
    RECORDS,
    SEEDS,
    learning_table,
    load_records,
    record_case,
    recorded_case,
    spec_hash,
)
from benchmarks.sb3_presets import PeerPlan, plan
from coach.cli_options import Seeds
from coach.presets import load_preset
from tests.learning.golden_case import EPISODES, SEED_OFFSET

ROOT = Path(__file__).resolve().parents[1]
PRESETS = ["CartPole_DQN", "CartPole_ClippedPPO", "Pendulum_SAC", "Pendulum_TD3"]
"""What the timing compares."""
LEARNING_PRESETS = [
    "CartPole_DQN",
    "CartPole_ClippedPPO",
    "CartPole_A2C",
    "Pendulum_SAC",
    "Pendulum_TD3",
]
"""What the learning comparison (``--learning``) compares."""
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


def run_side(
    side: str,
    peer: PeerPlan,
    overrides: list[str],
    seed: int = 0,
    final_agent_seed: int | None = None,
) -> dict[str, Any]:
    """One whole run on ``seed`` in a fresh process; what it reported and its wall time.
    With ``final_agent_seed``, the process also evaluates its final agent on `EPISODES`
    episodes seeded with it (`benchmarks.peer_runs`)."""
    module = [sys.executable, "-m", "benchmarks.peer_runs", side]
    with tempfile.TemporaryDirectory(prefix="peers-") as folder:
        if side == "coach":
            command = [*module, peer.preset, folder, "--seed", str(seed)]
            if final_agent_seed is not None:
                command += ["--final-agent", str(final_agent_seed)]
            for override in overrides:
                command += ["-cp", override]
        else:
            spec = {**peer.spec, "seed": seed}
            if final_agent_seed is not None:
                spec["final_evaluation"] = {"seed": final_agent_seed, "episodes": EPISODES}
            command = [*module, json.dumps(spec)]
        # SB3 makes its logger's folder (empty) in the system's temp folder unless told
        # where: here, the run's own, removed with it.
        env = {**os.environ, "SB3_LOGDIR": folder}
        start = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
    lines = [line for line in done.stdout.splitlines() if line.startswith("PEER ")]
    if done.returncode != 0 or len(lines) != 1:
        raise RuntimeError(
            f"{side} run of {peer.preset} on seed {seed} failed (exit {done.returncode}):\n"
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


def setting_rows(peer: PeerPlan, sb3: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Each setting as Coach and SB3 have it, shown as the table shows them."""
    names = list(dict.fromkeys([*peer.coach, *sb3]))
    return [
        (name, _shown(peer.coach.get(name, "(missing)")), _shown(sb3.get(name, "(missing)")))
        for name in names
    ]


def settings_table(peer: PeerPlan, sb3: dict[str, Any]) -> list[str]:
    """Print Coach's settings beside SB3's; the names of those that differ."""
    print(f"\n{peer.preset}: Coach against Stable-Baselines3 {peer.algorithm}")
    rows = setting_rows(peer, sb3)
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


# -- the learning comparison (--learning) -------------------------------------------------


Case = tuple[str, str, int]
"""(preset, side, seed): one whole run of the learning comparison."""


def threshold(preset: str) -> float:
    """The reward the preset's final agents are held to: its validation's ``min_reward``."""
    validation = load_preset(preset).validation
    if validation is None or validation.min_reward is None:
        raise SystemExit(f"{preset} promises no minimum reward to compare final agents with")
    return float(validation.min_reward)


def run_hashes(peer: PeerPlan) -> dict[str, str]:
    """By side, the hash of what its run is built from: Coach's resolved parameters, SB3's
    spec (but the seed, which each case sets)."""
    spec = {key: value for key, value in peer.spec.items() if key != "seed"}
    return {"coach": spec_hash(peer.parameters), "sb3": spec_hash(spec)}


def case_record(result: dict[str, Any], overrides: list[str], spec: str) -> dict[str, Any]:
    """What the records keep of a finished case (`benchmarks.peer_learning`)."""
    return {
        "final_agent": result["final_agent"],
        "last_evaluation": result["final_reward"],
        "env_steps": result["env_steps"],
        "gradient_steps": result["gradient_steps"],
        "train_seconds": round(result["train_seconds"], 2),
        "wall_seconds": round(result["wall"], 2),
        "overrides": overrides,
        "spec": spec,
        "commit": commit(),
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
    }


def learning(args: argparse.Namespace) -> int:
    """Run every case of the learning comparison not yet recorded with the same parameters,
    ``args.jobs`` at a time, recording each as it ends; print the table of the records."""
    presets: list[str] = args.presets or LEARNING_PRESETS
    seeds = sorted({seed for group in args.seeds for seed in group}) if args.seeds else SEEDS
    peers = {p: plan(p, args.overrides) for p in presets}
    thresholds = {p: threshold(p) for p in presets}
    hashes = {p: run_hashes(peer) for p, peer in peers.items()}
    records = load_records(args.records)
    todo: list[Case] = []
    for preset in presets:
        for seed in seeds:
            for side in SIDES:
                recorded = recorded_case(records, preset, side, seed)
                if recorded is None or recorded["spec"] != hashes[preset][side]:
                    todo.append((preset, side, seed))
    print(
        f"{len(todo)} of {len(presets) * len(seeds) * len(SIDES)} cases to run, "
        f"{args.jobs} at a time; the others are recorded in {args.records} with the same "
        "parameters",
        flush=True,
    )
    problems: list[str] = []
    shown: set[str] = set()
    pool = ThreadPoolExecutor(args.jobs)  # each case is a process of its own
    try:
        futures = {}
        for case in todo:
            preset, side, seed = case
            final_agent_seed = seed + SEED_OFFSET  # golden's rule: apart from training seeds
            run = pool.submit(run_side, side, peers[preset], args.overrides, seed, final_agent_seed)
            futures[run] = case
        for future in as_completed(futures):
            preset, side, seed = futures[future]
            try:
                result = future.result()
            except RuntimeError as error:
                problems.append(str(error).splitlines()[0])
                print(error, flush=True)
                continue
            peer = peers[preset]
            if side == "sb3":
                if preset not in shown:
                    settings_table(peer, result["settings"])
                    shown.add(preset)
                rows = setting_rows(peer, result["settings"])
                differ = [name for name, ours, theirs in rows if ours != theirs]
                if differ:  # not recorded: the runs are not identical
                    problems.append(f"{preset} seed {seed}: SB3's settings differ: {differ}")
                    continue
            spec = hashes[preset][side]
            record = case_record(result, args.overrides, spec)
            record_case(
                args.records, preset, peer.algorithm, thresholds[preset], side, seed, record
            )
            print(
                f"  {preset} {side} seed {seed}: final agent {result['final_agent']:.1f} on "
                f"{EPISODES} episodes, {result['env_steps']:,} env steps, "
                f"{result['wall']:.0f} s",
                flush=True,
            )
    except BaseException:  # Ctrl-C: no new case starts (those running end with their signal)
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown()
    records = {p: e for p, e in load_records(args.records).items() if p in presets}
    print("\n" + learning_table(records, seeds), end="")
    if problems:
        print("\nnot recorded:\n  " + "\n  ".join(problems))
        return 1
    return 0


def _seeds(text: str) -> tuple[int, ...]:
    """``--seeds``: ``0-9``, ``0,3,7`` (as ``coach --seeds`` takes them)."""
    try:
        return tuple(Seeds().convert(text, None, None))
    except click.BadParameter as error:
        raise argparse.ArgumentTypeError(error.message) from None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", nargs="+")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--float32", action="store_true", help="Coach's networks in float32")
    parser.add_argument("--short", action="store_true", help="tiny budgets (for tests)")
    parser.add_argument(
        "--learning", action="store_true", help="the final agents on many seeds, not the times"
    )
    parser.add_argument("--seeds", nargs="+", type=_seeds, help="--learning: 0-9, or 0,3,7")
    parser.add_argument("--jobs", type=int, default=1, help="--learning: cases at once")
    parser.add_argument(
        "--records",
        type=Path,
        default=ROOT / RECORDS,
        help="--learning: the records file (kept cases are not run again)",
    )
    parser.add_argument(
        "-cp",
        dest="overrides",
        action="append",
        default=[],
        help="--learning: a Coach override for every preset (both sides follow it)",
    )
    args = parser.parse_args()
    if args.learning:
        if args.short or args.float32 or args.repeats != 1:
            parser.error(
                "--learning runs the presets as they are: no --short, --float32, --repeats"
            )
        sys.exit(learning(args))
    if args.seeds or args.overrides or args.jobs != 1:
        parser.error("--seeds, --jobs and -cp are for --learning")
    args.presets = args.presets or PRESETS
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
