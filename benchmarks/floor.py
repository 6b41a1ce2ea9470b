"""Coach's gradient step against the floor of its math: the same update written directly in
PyTorch, with no framework around it.

    python -m benchmarks.floor [--steps N] [--repeats N] [--clock cpu|wall] [--threads N]
                               [--only FAMILY ...] [--short]

For each agent family (DQN, C51 and QR-DQN on their CartPole presets' settings, Clipped PPO
on CartPole_ClippedPPO's, SAC, TD3 and DDPG on their Pendulum presets', SAC and TD3 again
with their twin critics stacked into one network), the floor is a
minimal hand-written update (`benchmarks.floors`): the same network shapes, batch, losses,
optimizer (fused Adam), gradient clipping (foreach) and target networks, sampling its batch
by index from tensors already in memory, and the same precision (under ``torch.autocast``
in bfloat16 where the preset's networks run learning in bfloat16: Pendulum_SAC and
Pendulum_TD3 on a CPU with bfloat16 instructions). Coach's figure is its learner's whole
gradient step on the preset's own agent: for the off-policy families one `Learner.learn` on a batch
sampled from its replay memory after a heatup, sampling included; for Clipped PPO one
training phase on a full rollout block collected by the agent (`learn_block`: GAE, then the
epochs of minibatches), divided by its minibatch updates, as its floor is timed.

The two sides of a family are timed in turn, ``--repeats`` times each, and the table prints
the best time per gradient step of each, their ratio (the aim: 1.15 or less for DQN, SAC and
TD3, 1.3 or less for the others) and the parameters trained (the floor's; Coach's in
brackets where they differ). The time is this process's CPU time by default (``--clock
cpu``): with one torch thread it is the wall time of an idle machine, and other processes
on a shared one barely change it; ``--clock wall`` takes the wall time (what to read with
``--threads`` above 1: CPU time adds up every thread's). ``--short`` runs 20
steps of each, once (for tests).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch

from benchmarks.floors.common import Update
from benchmarks.floors.continuous import ddpg_floor, sac_floor, td3_floor
from benchmarks.floors.policy import clipped_ppo_floor
from benchmarks.floors.value import c51_floor, dqn_floor, qr_dqn_floor
from coach.agents.learning import Learner
from coach.agents.on_policy import OnPolicyAgent
from coach.agents.on_policy_learning import OnPolicyLearner
from coach.core.step_units import EnvironmentSteps
from coach.graph_managers.graph_manager import GraphManager
from coach.graph_managers.parameters import RunContext
from coach.parameters import set_parameter
from coach.presets import load_preset


def _online_parameters(learner: Learner) -> int:
    return sum(p.numel() for n in learner.networks.values() for p in n.online.parameters())


def coach_update(graph: GraphManager, heatup: int) -> Update:
    """The preset's learner's gradient step, after ``heatup`` random steps (off-policy), or
    its training phase on one block its agent collected (on-policy)."""
    agent = graph.top_level.agent
    memory, learner = agent.memory, agent.learner
    assert memory is not None and learner is not None
    if isinstance(agent, OnPolicyAgent):
        assert isinstance(learner, OnPolicyLearner)
        # One block acted by the current policy, kept: the agent does not learn from it.
        agent.train = lambda: 0  # type: ignore[method-assign]
        graph.train_and_act(EnvironmentSteps(agent.rollout.length * graph.top_level.num_envs))
        del agent.train
        assert agent.rollout.full
        clock = agent.clock()
        updates, _ = learner.learn_block(clock)
        return Update(lambda: learner.learn_block(clock), updates, _online_parameters(learner))
    graph.heatup(EnvironmentSteps(heatup))
    batch_size = agent.params.algorithm.batch_size
    learner.learn(memory.sample(batch_size))  # warm: the first step builds what it keeps
    return Update(lambda: learner.learn(memory.sample(batch_size)), 1, _online_parameters(learner))


STACKED = ("agent.algorithm.stack_critics", "True")

FAMILIES: list[tuple[str, str, Callable[[], Update], tuple[tuple[str, str], ...]]] = [
    ("DQN", "CartPole_DQN", dqn_floor, ()),
    ("C51", "CartPole_C51", c51_floor, ()),
    ("QR-DQN", "CartPole_QR_DQN", qr_dqn_floor, ()),
    ("PPO", "CartPole_ClippedPPO", clipped_ppo_floor, ()),
    ("SAC", "Pendulum_SAC", sac_floor, ()),
    ("SAC-stk", "Pendulum_SAC", sac_floor, (STACKED,)),
    ("TD3", "Pendulum_TD3", td3_floor, ()),
    ("TD3-stk", "Pendulum_TD3", td3_floor, (STACKED,)),
    ("DDPG", "Pendulum_DDPG", ddpg_floor, ()),
]
"""Each family's name, the preset whose learner is timed, its floor, and overrides of the
preset (``-stk``: the twin critics stacked into one network, against the same floor)."""


def in_bfloat16(update: Update) -> Update:
    """``update`` with its products in bfloat16 (``torch.autocast``), as a network of
    precision ``"bfloat16"`` runs learning's batches; weights and optimizer stay float32."""

    def call() -> object:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return update.call()

    return Update(call, update.updates, update.parameters)


CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}


def measure(
    preset: str,
    floor_of: Callable[[], Update],
    steps: int,
    repeats: int,
    heatup: int,
    tmp: Path,
    clock: Callable[[], float],
    threads: int = 1,
    overrides: tuple[tuple[str, str], ...] = (),
) -> tuple[float, float, int, int]:
    """The best seconds per gradient step of the floor and of Coach (its preset with
    ``overrides``), timed in turn by ``clock`` on ``threads`` torch threads, and the
    parameters each trains."""
    graph_manager = load_preset(preset).graph_manager
    for path, value in overrides:
        set_parameter(graph_manager.parameters(), path, value)
    graph = graph_manager.create_graph(
        # The run's own thread count, which building the graph sets for the process.
        RunContext(
            seed=0, experiment_dir=tmp, quiet=True, progress_seconds=1e9, num_threads=threads
        )
    )
    coach = coach_update(graph, heatup)
    floor = floor_of()
    if any(n._bfloat16 for n in graph.top_level.agent.networks.values()):
        floor = in_bfloat16(floor)  # the preset's precision: its products in bfloat16
    floor.call()  # warm
    best_floor = best_coach = float("inf")
    for _ in range(repeats):
        best_floor = min(best_floor, floor.seconds(steps, clock))
        best_coach = min(best_coach, coach.seconds(steps, clock))
    graph.close()
    return best_floor, best_coach, floor.parameters, coach.parameters


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200, help="gradient steps per timing")
    parser.add_argument("--repeats", type=int, default=10, help="timings of each side, in turn")
    parser.add_argument("--clock", choices=list(CLOCKS), default="cpu", help="what is timed")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--short", action="store_true", help="tiny budgets (for tests)")
    parser.add_argument("--only", nargs="*", help="families to measure (all by default)")
    args = parser.parse_args()
    steps, repeats, heatup = (20, 1, 300) if args.short else (args.steps, args.repeats, 1000)
    torch.set_num_threads(args.threads)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for family, preset, floor_of, overrides in FAMILIES:
            if args.only and family not in args.only:
                continue
            times = measure(
                preset,
                floor_of,
                steps,
                repeats,
                heatup,
                Path(tmp),
                CLOCKS[args.clock],
                args.threads,
                overrides,
            )
            rows.append((family, preset, *times))
    print(
        f"\ngradient step time against the floor ({args.clock} time, best of {repeats} x "
        f"{steps:,} steps, {args.threads} thread(s))"
    )
    print(
        f"{'family':<8}  {'preset':<19}  {'floor ms':>8}  {'coach ms':>8}  {'ratio':>5}  "
        f"{'parameters':>10}"
    )
    for family, preset, floor, coach, floor_parameters, coach_parameters in rows:
        same = "" if floor_parameters == coach_parameters else f" (coach {coach_parameters:,})"
        print(
            f"{family:<8}  {preset:<19}  {floor * 1e3:>8.3f}  {coach * 1e3:>8.3f}  "
            f"{coach / floor:>5.2f}  {floor_parameters:>10,}{same}"
        )
    options = "--short" if args.short else f"--steps {steps} --repeats {repeats}"
    print(
        f"\nreproduce: python -m benchmarks.floor --clock {args.clock} --threads {args.threads} "
        f"{options}"
    )


if __name__ == "__main__":
    main()
