"""Multi-agent env steps/s against a bare PettingZoo loop on MPE simple_spread.

    python -m benchmarks.multi_agent [--steps N] [--repeats R] [--short]

Prints, for 1 and 4 copies of ``mpe2:simple_spread_v3`` (N=3, max_cycles=25): a bare loop
that steps the parallel environments with a dictionary of random actions and resets them when
no agent is left, next to `ParallelPettingZooEnvironment` stepped with the same actions, and
their ratio. Then the whole multi-agent level of ``SimpleSpread_SharedPPO`` (its 8 copies, one
Clipped PPO agent shared by the three ids): acting at random (heatup: the level, the slots,
the agent's acting side), and training (acting with the policy, storing, learning every
block), each against the bare loop over as many copies. Each figure is the best of
``--repeats`` timings, taken in turn, so that a busy moment of the machine does not decide a
ratio. ``--short`` takes tiny budgets on the same code paths (for tests). Needs
``pip install coach[multiagent]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentSteps
from coach.environments.pettingzoo_environment import PettingZooEnvironmentParameters
from coach.graph_managers.parameters import RunContext
from coach.presets import load_preset

PRESET = "SimpleSpread_SharedPPO"

ENV = "mpe2:simple_spread_v3"
KWARGS = {"N": 3, "max_cycles": 25}
ACTIONS = 5
"""simple_spread's discrete actions."""


def bare_loop(num_envs: int, actions: np.ndarray) -> float:
    """Env steps per second of plain PettingZoo copies stepped one after another."""
    from mpe2 import simple_spread_v3

    envs = [simple_spread_v3.parallel_env(**KWARGS) for _ in range(num_envs)]
    for i, env in enumerate(envs):
        env.reset(seed=i)
    ids = envs[0].possible_agents
    start = time.perf_counter()
    for row in actions:
        for copy, env in enumerate(envs):
            env.step({agent_id: row[j, copy] for j, agent_id in enumerate(ids)})
            if not env.agents:
                env.reset()
    return len(actions) * num_envs / (time.perf_counter() - start)


def adapter_loop(num_envs: int, actions: np.ndarray) -> float:
    """Env steps per second of the adapter over the same copies and actions."""
    params = PettingZooEnvironmentParameters(env=ENV, kwargs=KWARGS, num_envs=num_envs)
    env = params.build()
    env.reset(seed=0)
    ids = env.agent_ids
    start = time.perf_counter()
    for row in actions:
        env.step({agent_id: row[j] for j, agent_id in enumerate(ids)})
    seconds = time.perf_counter() - start
    env.close()
    return len(actions) * num_envs / seconds


def level_rate(steps: int, phase: RunPhase) -> float:
    """Env steps per second of the preset's whole level in ``phase`` (heatup: random acting;
    training: the shared agent acting, storing and learning)."""
    graph = load_preset(PRESET).graph_manager
    with tempfile.TemporaryDirectory() as directory:
        graph.create_graph(RunContext(seed=0, experiment_dir=Path(directory), quiet=True))
        try:
            run = graph.heatup if phase is RunPhase.HEATUP else graph.train_and_act
            run(EnvironmentSteps(min(steps, 800)))  # warm up: the first block, the caches
            start, before = time.perf_counter(), graph.env_steps
            run(EnvironmentSteps(steps))
            return (graph.env_steps - before) / (time.perf_counter() - start)
        finally:
            graph.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10_000, help="steps per timing")
    parser.add_argument("--repeats", type=int, default=5, help="timings per figure (best kept)")
    parser.add_argument("--short", action="store_true", help="tiny budgets (for tests)")
    args = parser.parse_args()
    if args.short:
        args.steps, args.repeats = 100, 1

    rows = []
    for num_envs in (1, 4):
        steps = max(1, args.steps // num_envs)
        rng = np.random.default_rng(0)
        actions = rng.integers(0, ACTIONS, size=(steps, KWARGS["N"], num_envs))
        bare, adapter = 0.0, 0.0
        for _ in range(args.repeats):
            bare = max(bare, bare_loop(num_envs, actions))
            adapter = max(adapter, adapter_loop(num_envs, actions))
        rows.append((num_envs, bare, adapter, adapter / bare))

    print(f"\n{ENV} {KWARGS}: the adapter vs. a bare PettingZoo loop (best of {args.repeats})")
    print(f"{'envs':>4}  {'bare loop steps/s':>17}  {'adapter steps/s':>15}  {'ratio':>5}")
    for num_envs, bare, adapter, ratio in rows:
        print(f"{num_envs:>4}  {bare:>17,.0f}  {adapter:>15,.0f}  {ratio:>5.2f}")
    copies = load_preset(PRESET).graph_manager.parameters()["environment"].num_envs
    rng = np.random.default_rng(0)
    actions = rng.integers(0, ACTIONS, size=(max(1, args.steps // copies), KWARGS["N"], copies))
    bare = heatup = training = 0.0
    for _ in range(args.repeats):
        bare = max(bare, bare_loop(copies, actions))
        heatup = max(heatup, level_rate(args.steps, RunPhase.HEATUP))
        training = max(training, level_rate(4 * args.steps, RunPhase.TRAIN))
    print(f"\n{PRESET}, {copies} copies: the whole level vs. the bare loop")
    print(f"{'what':<32}  {'env steps/s':>11}  {'vs bare':>7}")
    print(f"{'bare PettingZoo loop':<32}  {bare:>11,.0f}  {1.0:>7.2f}")
    print(f"{'level acting at random':<32}  {heatup:>11,.0f}  {heatup / bare:>7.2f}")
    print(f"{'level training (shared PPO)':<32}  {training:>11,.0f}  {training / bare:>7.2f}")
    options = "--short" if args.short else f"--steps {args.steps} --repeats {args.repeats}"
    print(f"\nreproduce: python -m benchmarks.multi_agent {options}")


if __name__ == "__main__":
    main()
