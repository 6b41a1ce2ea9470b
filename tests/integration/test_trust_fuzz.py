"""Files Coach reads, mutated, fed to the commands that read them: never code, never a
traceback, never a leftover folder.

Real files are mutated (a run's ``params.yaml``, a YAML preset, a search space: values of
other types, YAML tags that build objects, other encodings, truncation, binary garbage,
levels and base presets that name code) and given to ``coach -p``, ``coach --resume``,
``coach export`` and ``coach tune``. Each case either runs (two env steps; a study of one
such trial) or exits 2 with exactly one ``coach: error:`` line and leaves nothing behind. The
marker module that a mutation may name (``trust_marker_env:Marked``) writes a file when it
is made: it must never be.

The commands run in this process (``coach``'s click command, as the option checks of
tests/integration/test_cli_errors.py do): a case costs a preset's loading, not a Python
start with torch. Any exception other than the command's own exit is a failure (an internal
error reaching the user as a traceback).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.integration.coach_cli import TINY
from tests.unit.test_trust import MARKER_ENV, MARKER_PRESET

FUZZ = settings(
    max_examples=int(os.environ.get("COACH_FUZZ_EXAMPLES", "8")),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

SPACE = {"parameters": {"agent.algorithm.discount": {"float": [0.9, 0.99]}}}
"""A real search space, to mutate."""


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder with the marker module and preset, and a real run of CartPole_DQN."""
    folder = tmp_path_factory.mktemp("trust_fuzz")
    (folder / "trust_marker_env.py").write_text(MARKER_ENV)
    (folder / "marker_preset.py").write_text(MARKER_PRESET)
    sys.path.insert(0, str(folder))
    code, err = _coach(["-p", "CartPole_DQN", "-ep", str(folder / "exp"), "-q", *TINY], folder)
    assert code == 0, err
    yield next((folder / "exp" / "CartPole_DQN").iterdir())
    sys.path.remove(str(folder))
    sys.modules.pop("trust_marker_env", None)


def _coach(args: list[str], cwd: Path) -> tuple[int, str]:
    """Run the ``coach`` command here; its exit status and stderr. Signal handlers a run
    installs are put back."""
    from coach.cli import main

    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    err, out = io.StringIO(), io.StringIO()
    before = Path.cwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            try:
                main.main(args, prog_name="coach")
                code = 0
            except SystemExit as stop:
                code = stop.code if isinstance(stop.code, int) else 1
    finally:
        os.chdir(before)
        for number, handler in handlers.items():
            signal.signal(number, handler)
    return code, err.getvalue()


# -- mutations ----------------------------------------------------------------------------

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True),
    st.text(max_size=10),
    st.sampled_from(["EnvironmentSteps(-1)", "os:system", "trust_marker_env:Marked", "[1, 2"]),
)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3), max_leaves=4)
TAGS = [
    "!!python/object/apply:os.system ['touch pwned']",
    "!!python/name:os.system",
    "!!binary aGVsbG8=",
    "!!set {a: null}",
    "&a [*a]",
]


@st.composite
def mutated(draw: st.DrawFn, document: dict[str, object], folder: Path) -> bytes:
    """``document`` as a YAML file's bytes, changed in one way hypothesis picks."""
    kind = draw(
        st.sampled_from(["value", "key", "tag", "code", "encoding", "truncate", "binary", "base"])
    )
    changed = yaml.safe_load(yaml.safe_dump(document))
    parameters = changed.get("parameters") or {}
    key = draw(st.sampled_from(sorted(parameters))) if parameters else "seed"
    if kind == "value":
        parameters[key] = draw(values)
    elif kind == "key":
        parameters[draw(st.text(min_size=1, max_size=12))] = draw(values)
    elif kind == "code":
        field = draw(st.sampled_from(["environment.level", "environment.env", key]))
        parameters[field] = "trust_marker_env:Marked"
        parameters["environment.kwargs"] = {"marker": str(folder / "made")}
    elif kind == "base" and "preset" in changed:
        changed["preset"] = draw(
            st.sampled_from(
                [str(folder / "marker_preset.py"), "trust_marker_env:graph_manager", "", "CartPol"]
            )
        )
    text = yaml.safe_dump(changed, sort_keys=False)
    if kind == "tag":
        lines = text.splitlines()
        at = draw(st.integers(0, len(lines) - 1))
        head, sep, _ = lines[at].partition(": ")
        lines[at] = f"{head}: {draw(st.sampled_from(TAGS))}" if sep else draw(st.sampled_from(TAGS))
        text = "\n".join(lines)
    data = text.encode()
    if kind == "encoding":
        data = text.encode(draw(st.sampled_from(["utf-16", "utf-32", "cp1252"])), "replace")
    elif kind == "truncate":
        data = data[: draw(st.integers(0, len(data)))]
    elif kind == "binary":
        data = draw(st.binary(min_size=1, max_size=200))
    return data


def _judge(code: int, err: str, folder: Path, left: list[Path]) -> None:
    """Either it ran (0) or it refused in one line (2), leaving nothing; never the marker."""
    event(f"exit {code}")  # --hypothesis-show-statistics: how many cases ran, how many refused
    assert "Traceback" not in err, err
    assert not (folder / "made").exists() and not (folder / "preset_ran").exists(), err
    assert not (folder / "pwned").exists()
    if code == 0:
        return
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("coach: error: "), (code, err)
    for path in left:
        assert not path.exists(), f"{path} left behind: {err}"


@FUZZ
@given(data=st.data())
def test_a_mutated_params_yaml_given_to_p_resume_or_export(base: Path, data: st.DataObject) -> None:
    folder = base.parents[2]
    document = yaml.safe_load((base / "params.yaml").read_text())
    content = data.draw(mutated(document, folder))
    command = data.draw(st.sampled_from(["-p", "--resume", "export"]))
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        run = Path(scratch) / "run"
        shutil.copytree(base, run)
        (run / "params.yaml").write_bytes(content)
        before = sorted(str(p) for p in run.rglob("*"))
        if command == "-p":
            out = Path(scratch) / "out"
            code, err = _coach(
                ["-p", str(run / "params.yaml"), "-ep", str(out), "-q", *TINY], folder
            )
            _judge(code, err, folder, [out])
        elif command == "--resume":
            code, err = _coach(["--resume", str(run), "-q"], folder)
            _judge(code, err, folder, [])
            if code == 2:  # the run folder is as it was
                assert sorted(str(p) for p in run.rglob("*")) == before
        else:
            policy = Path(scratch) / "policy.onnx"
            code, err = _coach(["export", "-crd", str(run), "-o", str(policy)], folder)
            _judge(code, err, folder, [policy])


@FUZZ
@given(data=st.data())
def test_a_mutated_yaml_preset_given_to_p(base: Path, data: st.DataObject) -> None:
    folder = base.parents[2]
    document = {
        "preset": "CartPole_DQN",
        "seed": 1,
        "parameters": {"agent.algorithm.discount": 0.9},
    }
    content = data.draw(mutated(document, folder))
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        preset, out = Path(scratch) / "run.yaml", Path(scratch) / "out"
        preset.write_bytes(content)
        code, err = _coach(["-p", str(preset), "-ep", str(out), "-q", *TINY], folder)
        _judge(code, err, folder, [out])


@FUZZ
@given(data=st.data())
def test_a_mutated_search_space_given_to_tune(base: Path, data: st.DataObject) -> None:
    pytest.importorskip("optuna")
    folder = base.parents[2]
    content = data.draw(mutated(SPACE, folder))
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        space, out = Path(scratch) / "space.yaml", Path(scratch) / "studies"
        space.write_bytes(content)
        args = ["tune", "-p", "CartPole_DQN", "--space", str(space), "--trials", "1"]
        code, err = _coach([*args, "-ep", str(out), *TINY], folder)
        _judge(code, err, folder, [out])
