"""Where an error was raised in the user's own code (`coach.run_failures.user_code_line`): the
innermost frame outside Coach, Python and the installed packages; none where the error is
Coach's own (the console then says ``internal error``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from coach.errors import CoachError
from coach.parameters import set_parameter
from coach.presets import load_preset
from coach.run_failures import user_code_line


def _raised(call: object) -> BaseException:
    with pytest.raises(BaseException) as error:
        call()  # type: ignore[operator]
    return error.value


def test_an_error_in_coachs_own_code_names_no_user_line() -> None:
    roots = load_preset("CartPole_DQN").graph_manager.parameters()
    error = _raised(lambda: set_parameter(roots, "agent.algorithm.nope", "1"))
    assert isinstance(error, CoachError) and user_code_line(error) is None
    assert user_code_line(_raised(lambda: int("x"))) is not None  # this test file is "yours"


def test_the_innermost_frame_of_the_users_own_file_is_named(tmp_path: Path) -> None:
    source = tmp_path / "my_agent.py"
    source.write_text(
        "import json\n\n\ndef learn(text):\n    return json.loads(text)\n\n\n"
        "def train():\n    return learn('{')\n"
    )
    spec = importlib.util.spec_from_file_location("my_agent", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # Raised deep in the json package; the innermost frame of the user's file is learn's.
    assert user_code_line(_raised(module.train)) == f"{source}:5, in learn"
