"""Each batch preset's dataset recipe, run as written, makes the dataset its docstring
describes: the commands a user copies from the preset (or from its missing-dataset error)
are run in a shell, into a fresh Minari root, and the dataset's figures are checked.

Slow (20 s for CartPole and Acrobot, about 5 minutes for Pendulum's SAC training): marked
``learning``, out of the default run (``pytest -m learning tests/learning``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from coach.batch.datasets import load_dataset
from coach.batch.graph_manager import BatchRLGraphManager
from coach.presets import list_presets, load_preset

DESCRIBED = {
    "cartpole/ppo-half-v0": (210, 51_222, 243.9),
    "acrobot/a2c-half-v0": (194, 49_888, -256.2),
    "pendulum/sac-expert-v0": (100, 20_000, -162.4),
}
"""Episodes, steps and mean episode reward, as the presets' docstrings give them."""


def _recipes() -> dict[str, str]:
    recipes = {}
    for name in list_presets():
        graph = load_preset(name).graph_manager
        if isinstance(graph, BatchRLGraphManager):
            recipes[graph.batch_params.dataset] = graph.batch_params.dataset_recipe
    return recipes


def test_every_batch_dataset_is_described() -> None:
    assert set(_recipes()) == set(DESCRIBED)


@pytest.mark.learning
@pytest.mark.parametrize("dataset", sorted(DESCRIBED))
def test_the_recipe_makes_the_described_dataset(dataset: str, tmp_path: Path) -> None:
    recipe = _recipes()[dataset]
    root = tmp_path / "minari"
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "MINARI_DATASETS_PATH": str(root),
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
    }
    result = subprocess.run(
        ["bash", "-e", "-c", recipe], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    made = load_dataset(root / dataset)
    episodes, steps, mean = DESCRIBED[dataset]
    assert made.name == dataset
    assert (made.num_episodes, made.total_steps) == (episodes, steps)
    assert np.mean([e.rewards.sum() for e in made.episodes]) == pytest.approx(mean, abs=0.05)
