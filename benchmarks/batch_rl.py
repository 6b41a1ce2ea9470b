"""Training throughput of the batch-RL presets: gradient steps per second over their
datasets, and the time of an epoch's off-policy evaluation.

    python -m benchmarks.batch_rl [--epochs N] [--short] [PRESET ...]

Each preset loads its dataset, then trains ``--epochs`` epochs on seed 0 without evaluating
in the environment; the table shows the gradient steps per second of that training and the
mean seconds of one epoch's off-policy estimates (``-`` where the preset makes none). A
preset whose dataset is missing is listed as not measured, with why (``coach -p PRESET``
then gives the commands that make it).

``--short`` (for tests) needs no dataset: it records, under each preset's dataset name, 600
steps of uniform random actions in the preset's environment into a temporary Minari folder
(``MINARI_DATASETS_PATH``), and trains one epoch over them.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from coach.batch.datasets import write_dataset
from coach.batch.episodes import Episode
from coach.batch.graph_manager import BatchRLGraphManager
from coach.errors import CoachError
from coach.exploration.exploration_policy import uniform_behaviour
from coach.graph_managers.parameters import RunContext
from coach.presets import list_presets, load_preset


def batch_presets() -> list[str]:
    return [
        n for n in list_presets() if isinstance(load_preset(n).graph_manager, BatchRLGraphManager)
    ]


def record_random_dataset(graph: BatchRLGraphManager, steps: int, seed: int = 0) -> None:
    """Write ``graph``'s dataset (under its name, in the current Minari folder): the whole
    episodes of uniform random actions in its environment within ``steps`` steps (at least
    one episode), with the behaviour that a dataset logs for them."""
    env = graph.env_params.make_env()
    env.action_space.seed(seed)
    behaviour = {k: v[0] for k, v in uniform_behaviour(env.action_space, 1).items()}
    episodes: list[Episode] = []
    taken = 0
    while taken < steps or not episodes:
        observation, _ = env.reset(seed=seed + len(episodes))
        observations, actions, rewards, terminations, truncations = [observation], [], [], [], []
        done = False
        while not done:
            action = env.action_space.sample()
            observation, reward, terminated, truncated, _ = env.step(action)
            observations.append(observation)
            actions.append(action)
            rewards.append(float(reward))
            terminations.append(bool(terminated))
            truncations.append(bool(truncated))
            done = bool(terminated or truncated)
        taken += len(actions)
        episodes.append(
            Episode(
                observations=np.stack(observations),
                actions=np.stack(actions),
                rewards=np.asarray(rewards),
                terminations=np.asarray(terminations),
                truncations=np.asarray(truncations),
                behaviour={k: np.stack([v] * len(actions)) for k, v in behaviour.items()},
            )
        )
    write_dataset(
        graph.batch_params.dataset,
        episodes,
        env.observation_space,
        env.action_space,
        env_id=env.spec.id if env.spec is not None else None,
        algorithm_name="uniform random actions",
        description="uniform random actions, for benchmarks.batch_rl --short and tests",
    )
    env.close()


def measure(name: str, epochs: int, recorded: set[str] | None) -> tuple[int, float, float | None]:
    """Transitions, gradient steps per second, and seconds per off-policy evaluation; with
    ``recorded`` (the datasets written so far), over a random dataset written if new."""
    graph = load_preset(name).graph_manager
    assert isinstance(graph, BatchRLGraphManager)
    if recorded is not None and graph.batch_params.dataset not in recorded:
        record_random_dataset(graph, 600)
        recorded.add(graph.batch_params.dataset)
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


def table(presets: list[str], epochs: int, short: bool) -> None:
    print(f"\nBatch RL throughput, {epochs} epochs per preset, seed 0, 1 thread")
    if short:
        print("(--short: datasets of 600 random steps, in a temporary folder)")
    print(f"{'preset':<28} {'transitions':>11} {'gradient steps/s':>16} {'OPE s/epoch':>11}")
    recorded: set[str] | None = set() if short else None
    for name in presets:
        try:
            transitions, rate, ope = measure(name, epochs, recorded)
        except CoachError as error:  # its dataset is missing
            if short:
                raise  # it made its own dataset: an error is the benchmark's own
            print(f"{name:<28} not measured: {str(error).splitlines()[0]}")
            continue
        ope_text = f"{ope:.2f}" if ope is not None else "-"
        print(f"{name:<28} {transitions:>11,} {rate:>16,.0f} {ope_text:>11}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("presets", nargs="*", default=None)
    parser.add_argument("--epochs", type=int, default=3, help="epochs per preset")
    parser.add_argument(
        "--short", action="store_true", help="one epoch over random datasets (for tests)"
    )
    args = parser.parse_args()
    presets = args.presets or batch_presets()
    if args.short:
        args.epochs = 1
        with tempfile.TemporaryDirectory() as minari:
            os.environ["MINARI_DATASETS_PATH"] = minari  # the user's datasets stay untouched
            table(presets, args.epochs, short=True)
    else:
        table(presets, args.epochs, short=False)
    options = ["--short" if args.short else f"--epochs {args.epochs}", *args.presets]
    print(f"\nreproduce: python -m benchmarks.batch_rl {' '.join(options)}")


if __name__ == "__main__":
    main()
