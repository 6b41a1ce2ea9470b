"""Generated values thrown at every option of the ``coach`` command and at ``-cp`` paths and
values, each case a real ``python -m coach.cli`` subprocess in a folder of its own.

Whatever is given, the command either runs (a run of two env steps: the last overrides of
every case make heatup, the training budget, the evaluation and its period one step long)
or refuses: exit 2 with exactly one line on stderr, ``coach: error: ...``, and nothing left
in its folder. Never a traceback, never another exit status.

Valid values are kept cheap on purpose: positive counts are small (a huge valid budget is a
long run, not an error), ``--backend ray`` is left out (it starts a Ray runtime), and paths
stay inside the case's folder. The huge and negative values generated are the ones a range
refuses.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coach.parameter_tree import flatten
from coach.presets import load_preset
from tests.integration.coach_cli import COMMAND, ENV, TINY, coach, experiment

# Every valid case is a run of two env steps: TINY comes last (a case that sets one of its
# paths to another value is refused, a path given twice).

FUZZ = settings(
    # A case is a subprocess of a few seconds (torch's import alone takes two): a handful of
    # cases per test in the default suite, more with COACH_FUZZ_EXAMPLES=200 for a deep run.
    max_examples=int(os.environ.get("COACH_FUZZ_EXAMPLES", "12")),
    deadline=None,
    derandomize=True,  # the same cases on every machine: CI is reproducible
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# -- values -------------------------------------------------------------------------------

# Text a shell can pass (no NUL), control characters and unicode included.
text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
               max_size=12)  # fmt: skip
small = st.integers(min_value=-3, max_value=3)
refused_ints = st.one_of(st.integers(max_value=-1), st.integers(min_value=2**32))
numbers = st.one_of(small, refused_ints, st.floats(allow_nan=True, allow_infinity=True))


def as_text(values: st.SearchStrategy[object]) -> st.SearchStrategy[str]:
    return values.map(str)


option_values = {
    "--seed": st.one_of(as_text(numbers), as_text(st.integers(0, 2**32 - 1)), text),
    "--threads": st.one_of(as_text(st.integers(-10, 10_000)), as_text(numbers), text),
    "--evaluate": st.one_of(as_text(st.integers(max_value=2)), as_text(numbers), text),
    "-n": st.one_of(as_text(st.integers(max_value=1)), text),
    "-s": st.one_of(as_text(numbers), st.sampled_from(["1e-3", "inf", "-inf", "nan", "", "5"])),
    "--device": st.one_of(
        st.sampled_from(["cpu", "cuda", "cuda:0", "cuda:7", "mps", "CPU", "cpu:0", "", " cpu"]),
        text,
    ),
    # Never "ray": a case that starts a Ray runtime would share ports with the Ray tests.
    "--backend": st.one_of(
        st.sampled_from(["local", "Local", "", "rays", "ray "]), text.filter(lambda v: v != "ray")
    ),
    "--ray-address": st.one_of(st.sampled_from(["auto", "127.0.0.1:6379", ""]), text),
    "-e": st.one_of(st.sampled_from(["run", "", ".", "..", "a/b", "/abs", "é ü"]), text),
    "-ep": st.one_of(st.sampled_from(["out", "", ".", "a/b/c", "params.yaml"]), text),
    "-lvl": st.one_of(st.sampled_from(["pong", ""]), text),
    "--record-dataset": st.one_of(st.sampled_from(["test/fuzz-v0", "x", "a//b", ""]), text),
    "-p": st.one_of(st.sampled_from(["CartPole_DQN", "CartPoleDQN", ":x", ".x:y", ""]), text),
}
"""Generated values of each option that takes one (``-crd``, ``--resume``: see below)."""


# -- the cases ----------------------------------------------------------------------------


@contextmanager
def case_folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="coach_fuzz_") as folder:
        yield Path(folder)


@pytest.fixture(scope="module")
def datasets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where a valid --record-dataset writes (not ~/.minari)."""
    return tmp_path_factory.mktemp("minari")


def check(args: list[str], cwd: Path, datasets: Path) -> None:
    """Run ``coach args`` in ``cwd`` and check the outcome is a run or a one-line refusal."""
    result = subprocess.run(
        [*COMMAND, *args],
        cwd=cwd,
        env={**ENV, "MINARI_DATASETS_PATH": str(datasets)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Traceback" not in result.stderr, (args, result.stderr)
    assert result.returncode in (0, 2), (args, result.returncode, result.stderr)
    if result.returncode == 2:
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("coach: error: "), (args, result.stderr)
        assert list(cwd.iterdir()) == [], (args, "a refused run left files behind")


@pytest.fixture(scope="module")
def checkpointed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run of CartPole_DQN, for -crd and --resume: a run of two env steps (a
    heatup step, a training step), what a valid fuzz case costs."""
    root = tmp_path_factory.mktemp("checkpointed")
    result = coach("-p", "CartPole_DQN", "-ep", str(root), *TINY, cwd=root)
    assert result.returncode == 0, result.stderr
    run = experiment(root)
    assert "checkpoint saved at 2 env steps" in (run / "log.txt").read_text()
    return run


def _relative(value: str) -> bool:
    """Paths stay inside the case's folder."""
    return not value.startswith(("/", "~")) and ".." not in Path(value).parts


@FUZZ
@given(
    options=st.lists(
        st.sampled_from(sorted(option_values)).flatmap(
            lambda option: st.tuples(st.just(option), option_values[option])
        ),
        min_size=1,
        max_size=3,
    ),
    forms=st.lists(st.booleans(), min_size=3, max_size=3),
    restore=st.sampled_from(["", "run", "checkpoints", "params.yaml", "missing", "latest"]),
    restore_option=st.sampled_from(["-crd", "--resume"]),
)
def test_any_option_value_runs_or_is_refused_in_one_line(
    options: list[tuple[str, str]],
    forms: list[bool],
    restore: str,
    restore_option: str,
    checkpointed: Path,
    datasets: Path,
) -> None:
    args = ["-p", "CartPole_DQN", "-q"]
    for (option, value), attached in zip(options, forms, strict=False):
        if option == "-ep" and not _relative(value):
            value = f"x{value}".replace("..", "x")
        if attached:  # the form that takes a value starting with '-' as a value
            args.append(f"{option}={value}" if option.startswith("--") else f"{option}{value}")
        else:
            args += [option, value]
    if restore:
        paths = {
            "run": checkpointed,
            "checkpoints": checkpointed / "checkpoints",
            "params.yaml": checkpointed / "params.yaml",
            "missing": checkpointed / "checkpoint",  # misspelt
            "latest": checkpointed / "checkpoints" / "latest",
        }
        args += [restore_option, str(paths[restore])]
    with case_folder() as folder:
        check([*args, *TINY], folder, datasets)


def _paths() -> list[str]:
    roots = load_preset("CartPole_DQN").graph_manager.parameters()
    settable, _ = flatten(roots)
    return sorted(settable)


PATHS = _paths()


def _misspelt(path: str) -> st.SearchStrategy[str]:
    """``path`` with a character dropped, doubled or replaced, or a part renamed."""
    return st.integers(0, max(len(path) - 1, 0)).flatmap(
        lambda i: st.sampled_from(
            [path[:i] + path[i + 1 :], path[:i] + path[i] * 2 + path[i + 1 :],
             path[:i] + "_" + path[i + 1 :], path + ".x", path.rsplit(".", 1)[0]]
        )
    )  # fmt: skip


override_paths = st.one_of(
    st.sampled_from(PATHS),  # named three times: most cases set a real field
    st.sampled_from(PATHS),
    st.sampled_from(PATHS),
    st.sampled_from(PATHS).flatmap(_misspelt),
    text,
    st.sampled_from(["", ".", "agent.", ".agent", "agent..discount", "agent.network_wrappers.x"]),
)
literals = st.one_of(
    as_text(numbers),
    st.sampled_from(["None", "True", "[]", "{}", "()", "[1, 'a']", "{'a': 1}", "''", "'x'"]),
    text.map(repr),
)
calls = st.builds(
    lambda name, args: f"{name}({', '.join(args)})",
    st.sampled_from(["EnvironmentSteps", "EnvironmentEpisodes", "TrainingSteps", "Epochs",
                     "ConstantSchedule", "LinearSchedule", "ExponentialSchedule",
                     "PieceWiseSchedule", "eval", "open", "__import__"]),
    st.lists(literals, max_size=3),
)  # fmt: skip
override_values = st.one_of(literals, literals, calls, text)


@FUZZ
@given(
    overrides=st.lists(st.tuples(override_paths, override_values), min_size=1, max_size=2),
    separator=st.sampled_from(["=", "=", "=", "=", " = ", "", "=="]),
)
def test_any_override_runs_or_is_refused_in_one_line(
    overrides: list[tuple[str, str]], separator: str, datasets: Path
) -> None:
    args = ["-p", "CartPole_DQN", "-q"]
    for path, value in overrides:
        args += ["-cp", f"{path}{separator}{value}"]
    with case_folder() as folder:
        check([*args, *TINY], folder, datasets)
