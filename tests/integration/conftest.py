"""Fixtures of the integration tests that more than one module reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.coach_cli import SMALL, coach

STUDY = (("CartPole_DQN", "1"), ("CartPole_DQN", "2"), ("CartPole_DDQN", "1"))
"""The runs of `study_experiments`: two presets on CartPole, two seeds of one."""


@pytest.fixture(scope="session")
def study_experiments(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An ``experiments`` folder of short real runs made by the ``coach`` command, one folder
    ``<preset>_<seed>`` each (`STUDY`); made once per test process, and only read."""
    root = tmp_path_factory.mktemp("study")
    for preset, seed in STUDY:
        done = coach("-p", preset, "--seed", seed, "-e", f"{preset}_{seed}", *SMALL, cwd=root)
        assert done.returncode == 0, done.stderr
    return root / "experiments"
