"""Coach's trust model (`coach.trust`): what a file may name for Coach to import or run.

These call the loaders in this process on files written here; the command line's own paths
(``coach -p``, ``--resume``, ``export``, groups, ``tune``, ``plot``) are in
tests/integration/test_trust_cli.py.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
import yaml

from coach.errors import CoachError
from coach.parameters import set_parameter
from coach.presets import load_preset, load_run_preset, presets_dir
from coach.trust import (
    AllowedImports,
    FileSource,
    ImportNotAllowed,
    check_preset_spec,
    named_module,
    read_yaml,
)

MARKER_ENV = '''
from pathlib import Path

from gymnasium.envs.classic_control import CartPoleEnv


class Marked(CartPoleEnv):
    """CartPole that leaves a file behind when it is made: proof that Coach ran it."""

    def __init__(self, marker: str = "marker", **kwargs):
        Path(marker).write_text("made")
        super().__init__(**kwargs)
'''

MARKER_PRESET = """
from pathlib import Path

Path(__file__).with_name("preset_ran").write_text("ran")
from coach_presets.CartPole_DQN import graph_manager  # noqa: E402,F401
"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with a marker environment module (importable) and a marker preset file."""
    (tmp_path / "trust_marker_env.py").write_text(MARKER_ENV)
    (tmp_path / "marker_preset.py").write_text(MARKER_PRESET)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    sys.modules.pop("trust_marker_env", None)


def _yaml_preset(path: Path, base: str, parameters: dict[str, object]) -> Path:
    path.write_text(yaml.safe_dump({"preset": base, "parameters": parameters}))
    return path


def test_named_module_is_the_part_before_the_colon() -> None:
    assert named_module("os:system") == "os"
    assert named_module("pettingzoo.classic:tictactoe_v3") == "pettingzoo.classic"
    assert named_module("CartPole-v1") is None
    assert named_module(3) is None


def test_a_module_allows_its_submodules_and_a_file_is_its_resolved_path(tmp_path: Path) -> None:
    allowed = AllowedImports(("pettingzoo", str(tmp_path / "a" / ".." / "mine.py")))
    assert allowed.allows_module("pettingzoo") and allowed.allows_module("pettingzoo.classic")
    assert not allowed.allows_module("pettingzoo_evil") and not allowed.allows_module("os")
    assert allowed.allows_file(tmp_path / "mine.py")
    assert not allowed.allows_file(tmp_path / "other.py")


def test_a_file_cannot_set_a_level_that_imports_a_module(folder: Path) -> None:
    preset = _yaml_preset(
        folder / "run.yaml",
        "CartPole_DQN",
        {"environment.level": "os:system", "environment.kwargs": {"command": "touch pwned"}},
    )
    with pytest.raises(ImportNotAllowed) as refusal:
        load_preset(str(preset))
    message = str(refusal.value)
    assert "environment.level" in message and "'os'" in message
    assert "--allow-import os" in message and "\n" not in message


def test_an_allowed_module_loads_and_the_environment_is_made(folder: Path) -> None:
    marker = folder / "made"
    preset = _yaml_preset(
        folder / "run.yaml",
        "CartPole_DQN",
        {
            "environment.level": "trust_marker_env:Marked",
            "environment.kwargs": {"marker": str(marker)},
        },
    )
    with pytest.raises(ImportNotAllowed):
        load_preset(str(preset), AllowedImports(("trust_marker_en",)))  # a prefix is no module
    loaded = load_preset(str(preset), AllowedImports(("trust_marker_env",)))
    environment = loaded.graph_manager.parameters()["environment"]
    assert not marker.exists()  # loading names it; only making the environment runs it
    environment.make_env().close()
    assert marker.read_text() == "made"


def test_a_value_the_trusted_preset_already_has_needs_no_allowance(folder: Path) -> None:
    """A run of a shipped multi-agent preset repeats from its params.yaml as it is."""
    preset = load_preset("SimpleSpread_SharedPPO")
    env = preset.graph_manager.parameters()["environment"].env
    assert named_module(env) is not None
    yaml_file = _yaml_preset(
        folder / "run.yaml", "SimpleSpread_SharedPPO", {"environment.env": env}
    )
    assert load_preset(str(yaml_file)).graph_manager.parameters()["environment"].env == env
    changed = _yaml_preset(
        folder / "other.yaml", "SimpleSpread_SharedPPO", {"environment.env": "os:getcwd"}
    )
    with pytest.raises(ImportNotAllowed, match="--allow-import os"):
        load_preset(str(changed))


def test_a_value_the_user_gives_is_trusted(folder: Path) -> None:
    roots = load_preset("CartPole_DQN").graph_manager.parameters()
    set_parameter(roots, "environment.level", "trust_marker_env:Marked")  # -cp: the user's own
    with pytest.raises(ImportNotAllowed, match=r"run\.yaml: environment\.level"):
        set_parameter(
            roots,
            "environment.level",
            "os:system",
            read_from=FileSource("run.yaml", AllowedImports(("trust_marker_env",))),
        )


@pytest.mark.parametrize(
    "name",
    ["CartPole_DQN", "Atari_DQN", "Doom_Basic_DQN", "ControlSuite_SAC", "TicTacToe_SelfPlay_DQN"],
)
def test_every_kind_of_environment_holds_its_level_to_the_rule(folder: Path, name: str) -> None:
    environment = load_preset(name).graph_manager.parameters()["environment"]
    field = "env" if hasattr(environment, "env") else "level"
    preset = _yaml_preset(folder / "run.yaml", name, {f"environment.{field}": "os:system"})
    with pytest.raises(ImportNotAllowed, match=f"environment.{field}"):
        load_preset(str(preset))


def test_a_base_preset_that_is_python_runs_only_when_allowed(folder: Path) -> None:
    preset = _yaml_preset(folder / "run.yaml", "marker_preset.py", {})
    with pytest.raises(ImportNotAllowed) as refusal:
        load_preset(str(preset))
    assert f"--allow-import {folder / 'marker_preset.py'}" in str(refusal.value)
    assert not (folder / "preset_ran").exists()
    loaded = load_preset(str(preset), AllowedImports((str(folder / "marker_preset.py"),)))
    assert loaded.name == "marker_preset" and (folder / "preset_ran").exists()


def test_a_base_preset_that_is_a_module_runs_only_when_allowed(folder: Path) -> None:
    preset = _yaml_preset(folder / "run.yaml", "trust_marker_env:graph_manager", {})
    with pytest.raises(ImportNotAllowed, match="--allow-import trust_marker_env"):
        load_preset(str(preset))
    assert "trust_marker_env" not in sys.modules


def test_the_shipped_presets_and_yaml_files_are_named_freely(folder: Path) -> None:
    shipped = presets_dir()
    for spec in ("CartPole_DQN", "other.yaml", str(shipped / "CartPole_DQN.py")):
        check_preset_spec(spec, AllowedImports(), "run.yaml", shipped)
    with pytest.raises(ImportNotAllowed):
        check_preset_spec(str(folder / "marker_preset.py"), AllowedImports(), "run.yaml", shipped)


def test_a_run_of_a_preset_file_repeats_from_its_params_yaml_once_allowed(folder: Path) -> None:
    from coach.experiment import write_params

    preset = load_preset(str(folder / "marker_preset.py"))  # named by the user: trusted
    params = folder / "params.yaml"
    write_params(params, preset, 0, [])
    with pytest.raises(ImportNotAllowed):
        load_run_preset(params)
    again = load_run_preset(params, allowed=AllowedImports((str(folder / "marker_preset.py"),)))
    assert again.name == preset.name
    assert load_run_preset(params, base=str(folder / "marker_preset.py")).name == preset.name


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"preset: CartPole_DQN\nseed: !!python/object/apply:os.system ['true']\n", ":2:7: "),
        (b"preset: CartPole_DQN\nparameters:\n  a: [1, 2\n  b: }\n", ":4:4: "),
        (b"preset: \xff\xfe\x00binary", "the byte at offset 8 is not UTF-8 text"),
        (b"\tpreset: CartPole_DQN\n", ":1:1: "),
        (b"preset: CartPole_DQN\npreset: CartPole_DDQN\n", ":2:1: not valid YAML: the key"),
        (b"preset: CartPole_DQN\nparameters: &p {a: *p}\n", "contain itself"),
        (
            b"a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n"
            + b"".join(
                f"{n}: &{n} [{', '.join([f'*{p}'] * 10)}]\n".encode()
                for p, n in zip("abcdef", "bcdefg", strict=True)
            ),
            "more than 1,000,000 values",
        ),
        (b"[" * 5000 + b"]" * 5000, "nests too deep"),
    ],
)
def test_a_bad_yaml_file_is_one_line_with_its_place(
    tmp_path: Path, content: bytes, fragment: str
) -> None:
    path = tmp_path / "run.yaml"
    path.write_bytes(content)
    with pytest.raises(CoachError) as refusal:
        read_yaml(path)
    message = str(refusal.value)
    assert message.startswith(str(path)) and fragment in message and "\n" not in message
    if b"!!python" in content:
        assert "not allowed" in message


def test_no_module_of_coach_imports_by_name_outside_the_places_the_rule_holds() -> None:
    """Every import by a name that is data goes through a field declared with NAMES_CODE (the
    environments) or the preset loader; a new one must be held to the rule before it is added
    here."""
    import coach

    known = {
        "presets.py",  # a preset by module:attr, named by the user or allowed (check_preset_spec)
        "environments/parameters.py",  # GymEnvironmentParameters.level
        "environments/pettingzoo_environment.py",  # PettingZooEnvironmentParameters.env
    }
    root = Path(coach.__file__).parent
    found = set()
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = ast.unparse(node.func)
                if name in ("importlib.import_module", "__import__", "eval", "exec"):
                    found.add(str(path.relative_to(root)))
    assert found <= known, f"imports by name outside the trust model's places: {found - known}"
