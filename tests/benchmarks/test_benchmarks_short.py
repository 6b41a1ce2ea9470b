"""Every benchmark of ``make bench`` runs in its short mode and prints its table.

Each runs as ``make bench`` runs it, ``python -m benchmarks.NAME``, with ``--short``: tiny
budgets on the same code paths, so that a change that breaks a benchmark fails here rather
than on the next ``make bench``. The tests read the table's header and rows (that every row
was measured), never the figures: a test does not assert on wall-clock time. The
benchmarks that a session selects run two at a time (they are mostly one process each), the
first time one of them is asked for.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.integration.coach_cli import ENV

ROOT = Path(__file__).resolve().parents[2]
NUMBER = r"-?[\d,]+(\.\d+)?"
"""A figure of a table: 1,234 or 0.58 or -1637.5."""


def _row(*cells: str) -> str:
    """A table row: its cells, apart by spaces, alone on their line."""
    return r"(?m)^\s*" + r"\s+".join(cells) + r"\s*$"


VALUE_PRESETS = [
    "CartPole_DQN",
    "CartPole_DDQN",
    "CartPole_Dueling_DDQN",
    "CartPole_NStepQ",
    "CartPole_C51",
    "CartPole_QR_DQN",
    "CartPole_Rainbow",
    "CartPole_Bootstrapped_DQN",
]
BATCH_PRESETS = [
    "Acrobot_DDQN_BCQ_BatchRL",
    "CartPole_BC",
    "CartPole_DDQN_BCQ_BatchRL",
    "CartPole_DDQN_BatchRL",
    "Pendulum_BC",
]
PEERS = {
    "CartPole_DQN": (
        "DQN",
        [
            "gradient steps per round",
            r"target sync period \(env steps\)",
            "epsilon at probes",
            "Q network",
        ],
    ),
    "CartPole_ClippedPPO": (
        "PPO",
        [
            "steps per copy per block",
            "epochs",
            "GAE lambda",
            "learning rate at probes",
            "clip range at probes",
            "actor",
            "critic",
        ],
    ),
    "Pendulum_SAC": ("SAC", ["learning rate", "tau", "target entropy", "actor", "critics"]),
    "Pendulum_TD3": (
        "TD3",
        ["learning rate", "policy delay", "exploration noise std", "actor", "critics"],
    ),
}
"""benchmarks.peers: each preset's SB3 algorithm and settings of its own to check (beside
those every preset's table has, `PEER_SETTINGS`)."""
PEER_SETTINGS = [
    "environment",
    "env copies",
    "discount",
    "batch size",
    r"evaluation period \(env steps\)",
    "evaluation episodes",
    "random steps first",
]


def _same_setting(preset: str, algorithm: str, setting: str) -> str:
    """A row of the preset's settings table: the same value for Coach and SB3, and "yes"."""
    title = f"{preset}: Coach against Stable-Baselines3 {algorithm}"
    return rf"{title}\n(?:  .*\n)*?  {setting}\s+(?P<v>\S(?:.*\S)?)\s+(?P=v)\s+yes\n"


def _same_counts(preset: str) -> str:
    """The preset's two rows of the counts table: the same gradient steps and evaluations."""
    rest = rf"\s+(?P<g>[\d,]+)\s+(?P<e>\d+)\s+{NUMBER}\s*\n"
    return rf"(?m)^{preset}\s+coach\s+[\d,]+{rest}{preset}\s+sb3\s+[\d,]+\s+(?P=g)\s+(?P=e)\s"


ATARI_ROWS = [
    r"bare ale-py ALE/Breakout-v5 \(frameskip 4\)",
    r"Coach Atari env \(skip 4, max-pool, sticky\)",
    r"\+ Atari input filter \(84x84, stack 4\)",
    r"\+ stored in replay \(frames once\)",
    r"Atari_DQN heatup \(whole graph\)",
]

BENCHMARKS: dict[str, tuple[list[str], list[str]]] = {
    "throughput": (
        [],
        [
            _row("envs", "bare loop steps/s", "coach heatup steps/s", "ratio", "target"),
            *(_row(n, NUMBER, NUMBER, NUMBER, NUMBER) for n in ("1", "8")),
            _row("env steps/s", "gradient steps/s"),
            _row(NUMBER, NUMBER),
        ],
    ),
    "floor": (
        [],
        [
            _row("family", "preset", "floor ms", "coach ms", "ratio", "parameters"),
            _row("DQN", "CartPole_DQN", NUMBER, NUMBER, NUMBER, "67,586"),
            _row("C51", "CartPole_C51", NUMBER, NUMBER, NUMBER, "93,286"),
            _row("QR-DQN", "CartPole_QR_DQN", NUMBER, NUMBER, NUMBER, "92,772"),
            _row("PPO", "CartPole_ClippedPPO", NUMBER, NUMBER, NUMBER, "9,155"),
            _row("SAC", "Pendulum_SAC", NUMBER, NUMBER, NUMBER, "201,988"),
            _row("SAC-stk", "Pendulum_SAC", NUMBER, NUMBER, NUMBER, "201,988"),
            _row("TD3", "Pendulum_TD3", NUMBER, NUMBER, NUMBER, "367,403"),
            _row("TD3-stk", "Pendulum_TD3", NUMBER, NUMBER, NUMBER, "367,403"),
            _row("DDPG", "Pendulum_DDPG", NUMBER, NUMBER, NUMBER, "244,802"),
        ],
    ),
    # Fails, rather than skips, without stable-baselines3: `make install` installs it.
    "peers": (
        [],
        [
            *(
                _same_setting(preset, algorithm, setting)
                for preset, (algorithm, own) in PEERS.items()
                for setting in [*PEER_SETTINGS, *own]
            ),
            _row("preset", "timing", "coach s", "sb3 s", "ratio", "target"),
            *(
                _row(preset, timing, NUMBER, NUMBER, NUMBER, "0.65")
                for preset in PEERS
                for timing in ("whole process", "training")
            ),
            *(_same_counts(preset) for preset in PEERS),
        ],
    ),
    "prioritized_replay": (
        [],
        [
            _row(
                "capacity",
                "batch",
                r"sample\+update /s",
                r"us per sample\+update",
                "uniform sample us",
            ),
            *(_row("10,000", b, NUMBER, NUMBER, NUMBER) for b in ("32", "256")),
        ],
    ),
    "value_agents": (
        [],
        [
            _row("preset", "env steps/s", "gradient steps/s"),
            *(_row(name, NUMBER, NUMBER) for name in VALUE_PRESETS),
        ],
    ),
    "on_policy": (
        [],
        [
            _row("env steps", "wall time", "last evaluation"),
            _row("1,024", NUMBER + "s", NUMBER),
            _row("envs", "env steps/s", "gradient steps/s"),
            *(_row(n, NUMBER, NUMBER) for n in ("1", "8", "16")),
        ],
    ),
    "continuous": (
        [],
        [
            _row("env steps", "gradient steps", "wall time", "last evaluation"),
            _row("200", "100", NUMBER + "s", NUMBER),
            _row("preset", "gradient steps/s"),
            *(_row(name, NUMBER) for name in ("Pendulum_SAC", "Pendulum_TD3", "Pendulum_DDPG")),
        ],
    ),
    "atari": (
        [],
        [
            _row("Breakout, random actions", "env steps/s", "vs bare"),
            *(_row(name, NUMBER, NUMBER) for name in ATARI_ROWS),
            _row("frames written", "2,001"),
            _row(r"bytes per transition \(arrays\)", NUMBER),
        ],
    ),
    # Only the local backend: a Ray runtime and its actors take some 45 s to start on two
    # cores, more than the rest of this file. The Ray backend itself is tested in
    # tests/unit/parallel/test_ray_workers.py and tests/integration/test_workers_cli.py.
    "parallel": (
        ["--backends", "local"],
        [
            _row(
                "backend",
                "workers",
                "random steps/s",
                "x n=1",
                "worst",
                "policy steps/s",
                "x n=1",
                "worst",
            ),
            *(_row("bare", n, NUMBER, NUMBER, NUMBER) for n in ("1", "2")),
            *(
                _row(b, n, *[NUMBER] * 6)
                for b, n in (("none", "-"), ("local", "1"), ("local", "2"))
            ),
        ],
    ),
    "async_env": (
        [],
        [
            _row("level", "envs", "sync steps/s", "async steps/s", "async/sync", "async start s"),
            *(_row("CartPole-v1", n, *[NUMBER] * 4) for n in ("1", "2")),
        ],
    ),
    "envpool": (
        [],
        [
            _row("task", "way", "env steps/s", "vs sync"),
            *(
                _row(task, way, NUMBER, NUMBER)
                for task in ("Breakout", "HalfCheetah")
                for way in ("bare envpool", "coach envpool", "coach sync", "coach async")
            ),
        ],
    ),
    "batch_rl": (
        [],
        [
            _row("preset", "transitions", "gradient steps/s", "OPE s/epoch"),
            *(_row(name, NUMBER, NUMBER, rf"({NUMBER}|-)") for name in BATCH_PRESETS),
        ],
    ),
    "recurrent": (
        [],
        [
            _row("preset", "networks", "acting steps/s", "training steps/s", "time per step x"),
            _row("CartPoleNoVel_ClippedPPO", "feed-forward", NUMBER, NUMBER, "1.00"),
            _row("CartPoleNoVel_RecurrentPPO", "LSTM", NUMBER, NUMBER, NUMBER),
            _row("PendulumNoVel_RecurrentPPO", "feed-forward", NUMBER, NUMBER, "1.00"),
            _row("PendulumNoVel_RecurrentPPO", "LSTM", NUMBER, NUMBER, NUMBER),
            _row("CartPoleNoVel_R2D2", "LSTM", NUMBER, NUMBER, "-"),
        ],
    ),
    "multi_agent": (
        [],
        [
            _row("envs", "bare loop steps/s", "adapter steps/s", "ratio"),
            *(_row(n, NUMBER, NUMBER, NUMBER) for n in ("1", "4")),
            _row("what", "env steps/s", "vs bare"),
            _row("bare PettingZoo loop", NUMBER, "1.00"),
            _row("level acting at random", NUMBER, NUMBER),
            _row(r"level training \(shared PPO\)", NUMBER, NUMBER),
        ],
    ),
    "doom": (
        [],
        [
            _row("scenario", "bare loop", "coach env", "ratio", "heatup", "ratio"),
            _row("basic", NUMBER, NUMBER, NUMBER, NUMBER, NUMBER),
        ],
    ),
    "dnd": (
        [],
        [
            _row(
                "size",
                "index",
                "lists",
                "index s",
                r"lookup\+grad ms",
                "acting ms",
                "update ms",
                "recall@50",
            ),
            *(_row(size, "exact", "-", "-", *[NUMBER] * 4) for size in ("2,000", "5,000")),
            *(_row(size, "approximate", *[NUMBER] * 6) for size in ("2,000", "5,000")),
        ],
    ),
    "whole_runs": (
        [],
        [
            _row("preset", "shipped s", "stock optimizer s", "change", "stock layers s", "change"),
            _row("CartPole_DQN", NUMBER, *[NUMBER, r"[+-][\d,]+\.\d%"] * 2),
        ],
    ),
}


def test_every_benchmark_of_make_bench_is_tested() -> None:
    from benchmarks.tables import MODULES

    makefile = (ROOT / "Makefile").read_text()
    bench = makefile[
        makefile.index("\nbench:") : makefile.index("\n\n", makefile.index("\nbench:"))
    ]
    assert re.findall(r"python -m benchmarks\.(\w+)", bench) == ["tables"]
    assert list(MODULES) == list(BENCHMARKS)


def _run(name: str, minari: Path) -> subprocess.CompletedProcess[str]:
    # The user's datasets, as the benchmark sees them: it leaves them alone.
    env = {**ENV, "MINARI_DATASETS_PATH": str(minari)}
    return subprocess.run(
        [sys.executable, "-m", f"benchmarks.{name}", "--short", *BENCHMARKS[name][0]],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def runs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[dict[str, Future[subprocess.CompletedProcess[str]]], Path]]:
    """The selected benchmarks' runs, started together, two at a time; and the Minari
    folder that they were given."""
    selected = [
        str(item.callspec.params["name"])
        for item in request.session.items
        if isinstance(item, pytest.Function)
        and item.originalname == "test_a_benchmark_prints_its_table_in_short_mode"
    ]
    minari = tmp_path_factory.mktemp("benchmarks") / "minari"
    with ThreadPoolExecutor(max_workers=2) as pool:
        yield {name: pool.submit(_run, name, minari) for name in selected}, minari


@pytest.mark.parametrize("name", list(BENCHMARKS))
def test_a_benchmark_prints_its_table_in_short_mode(
    name: str, runs: tuple[dict[str, Future[subprocess.CompletedProcess[str]]], Path]
) -> None:
    futures, minari = runs
    result = futures[name].result()
    assert result.returncode == 0, result.stderr
    for pattern in BENCHMARKS[name][1]:
        assert re.search(pattern, result.stdout), f"no {pattern!r} in:\n{result.stdout}"
    command = f"python -m benchmarks.{name} "
    assert any(command in line and "--short" in line for line in result.stdout.splitlines())
    assert not minari.exists()


def test_make_bench_runs_each_module_and_saves_its_table(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.tables", "throughput", "--short", "--save", tmp_path],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    saved = (tmp_path / "throughput.txt").read_text()
    assert saved in done.stdout and re.search(BENCHMARKS["throughput"][1][0], saved)
    refused = subprocess.run(
        [sys.executable, "-m", "benchmarks.tables", "nope"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 2 and "no benchmark module nope" in refused.stderr


def test_whole_runs_times_a_batch_preset_against_a_checkout_without_its_dataset(
    tmp_path: Path,
) -> None:
    """``--presets all`` includes the batch presets, whose datasets a clean machine lacks:
    the cut run records a random one of its own, and the user's Minari folder stays as it
    was; ``--no-stock`` leaves the kept shortcuts' columns out."""
    minari = tmp_path / "minari"
    options = ["--steps", "300", "--repeats", "1", "--no-stock", "--against", str(ROOT)]
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.whole_runs", "--presets", "CartPole_BC", *options],
        cwd=ROOT,
        env={**ENV, "MINARI_DATASETS_PATH": str(minari)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert re.search(_row("preset", "shipped s", "before s", "change"), done.stdout)
    assert re.search(_row("CartPole_BC", NUMBER, NUMBER, r"[+-][\d,]+\.\d%"), done.stdout)
    assert "stock" not in done.stdout.replace("--no-stock", "")
    assert not minari.exists()
