"""How `coach plot` makes curves of runs: one per setting of a preset."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from coach.cli_plot import settings
from coach.studies.runs import Run


def _run(preset: str, seed: int, **parameters: object) -> Run:
    steps = np.array([100.0, 200.0])
    return Run(
        Path(f"{preset}/{seed}"),
        preset,
        seed,
        "Env-v0",
        steps,
        steps,
        steps,
        None,
        parameters=parameters,
    )


def test_the_seeds_of_one_setting_are_one_curve_named_after_the_preset() -> None:
    runs = [_run("A", 0, lr=1e-3, gamma=0.99), _run("A", 1, lr=1e-3, gamma=0.99), _run("B", 0)]
    curves = settings(runs)
    assert list(curves) == ["A", "B"]
    assert [r.seed for r in curves["A"]] == [0, 1]


def test_settings_of_one_preset_are_curves_labelled_by_what_differs() -> None:
    runs = [
        _run("A", 0, lr=1e-3, gamma=0.99),
        _run("A", 0, lr=3e-4, gamma=0.99),
        _run("A", 1, lr=1e-3, gamma=0.99),
    ]
    curves = settings(runs)
    assert sorted(curves) == ["A (lr=0.0003)", "A (lr=0.001)"]
    assert [r.seed for r in curves["A (lr=0.001)"]] == [0, 1]


def _folder(
    root: Path, seed: int, parameters: dict[str, object], preset: str = "CartPole_DQN"
) -> Path:
    """A run folder as coach writes one: params.yaml and progress.csv's evaluation rows."""
    import yaml

    folder = root / f"seed_{seed}"
    folder.mkdir(parents=True)
    document = {"preset": preset, "seed": seed, "parameters": parameters}
    (folder / "params.yaml").write_text(yaml.safe_dump(document))
    rows = ["wall_time,phase,agent,env_steps,reward,success_rate"]
    rows += [f"{i},evaluate,graph,{100 * i},{10.0 * i + seed}," for i in range(1, 5)]
    (folder / "progress.csv").write_text("\n".join(rows) + "\n")
    return folder


def test_a_figure_of_batch_runs_counts_gradient_steps(tmp_path: Path) -> None:
    from coach.cli_plot import plot_runs

    acting = {"environment.level": "CartPole-v1"}
    batch = {**acting, "batch.dataset": "cartpole/ppo-half-v0"}
    for name, parameters in (("acting", acting), ("batch", batch)):
        runs = [_folder(tmp_path / name, seed, parameters) for seed in (0, 1)]
        written = plot_runs(runs, tmp_path / f"plots_{name}", "env_steps", "reward")
        svg = next(p for p in written if p.name == "CartPole-v1.svg").read_text()
        label = "gradient steps" if name == "batch" else "env steps"
        assert label in svg and "threshold" in svg  # CartPole_DQN's 475, found by name


def test_a_relative_promise_is_drawn_and_scored_against_the_floor_given(tmp_path: Path) -> None:
    from coach.cli_plot import plot_runs

    preset = "SimpleSpread_SharedPPO"  # 70% of a gap measured when judged: no threshold here
    runs = [_folder(tmp_path / "runs", seed, {}, preset) for seed in (0, 1)]
    for floors in (None, {preset: 25.0}):
        output = tmp_path / f"plots_{bool(floors)}"
        written = plot_runs(runs, output, "env_steps", "reward", floors)
        svg = output / f"{preset}.svg"  # no level recorded: the figure is the preset's
        assert svg in written and ("threshold" in svg.read_text()) == bool(floors)
        table = output / "final_performance.csv"
        if floors:  # final scores 40 and 41 over the floor of 25
            assert table.read_text().splitlines()[1].startswith(f"{preset},2,25.0,1.6")
        else:
            assert not table.exists()
