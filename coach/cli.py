"""The ``coach`` command: run a preset, or list them.

coach -p CartPole_DQN
coach -p CartPole_DQN --seed 3 -cp agent.algorithm.discount=0.98
coach -l
"""

from __future__ import annotations

import datetime as dt
import platform
import sys
from pathlib import Path
from typing import Any, NoReturn

import click
import yaml

from coach.errors import CoachError

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def _fail(message: str) -> NoReturn:
    click.echo(f"coach: error: {message}", err=True)
    sys.exit(EXIT_USAGE)


def _experiment_dir(root: Path, name: str) -> Path:
    stamp = dt.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
    path = root / name / stamp
    suffix = 1
    while path.exists():
        suffix += 1
        path = root / name / f"{stamp}_{suffix}"
    path.mkdir(parents=True)
    return path


def _versions() -> dict[str, str]:
    import gymnasium
    import numpy
    import torch

    import coach

    return {
        "coach": coach.__version__,
        "python": platform.python_version(),
        "torch": str(torch.__version__),
        "gymnasium": gymnasium.__version__,
        "numpy": numpy.__version__,
    }


def write_params(path: Path, preset: Any, seed: int, overrides: list[str]) -> None:
    """Write ``params.yaml``: the resolved parameters, itself a YAML preset of the run."""
    from coach.parameters import flatten

    settable, fixed = flatten(preset.graph_manager.parameters())
    document = {
        "preset": preset.name,
        "seed": seed,
        "parameters": settable,
        "fixed": fixed,
        "versions": _versions(),
    }
    header = (
        f"# Resolved parameters of a run of {preset.name} ({preset.source}).\n"
        f"# Repeat the run with: coach -p {path}\n"
        f"# Overrides given on the command line: {overrides or 'none'}\n"
    )
    path.write_text(header + yaml.safe_dump(document, sort_keys=False, width=100))


def _list_presets() -> None:
    from coach.presets import describe, list_presets, load_preset

    rows = []
    for name in list_presets():
        try:
            environment, agent = describe(load_preset(name))
        except CoachError as error:
            environment, agent = "(fails to load)", str(error)
        rows.append((name, environment, agent))
    width = max([len(r[0]) for r in rows] + [6])
    env_width = max([len(r[1]) for r in rows] + [11])
    click.echo(f"{'preset':<{width}}  {'environment':<{env_width}}  agent")
    for name, environment, agent in rows:
        click.echo(f"{name:<{width}}  {environment:<{env_width}}  {agent}")


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-p", "--preset", help="Preset name, path/to/preset.py, run.yaml or module:attr.")
@click.option("-l", "--list", "list_", is_flag=True, help="List the presets and exit.")
@click.option("-e", "--experiment-name", help="Experiment folder name (default: the preset's).")
@click.option(
    "-ep",
    "--experiment-path",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("experiments"),
    show_default=True,
    help="Where experiment folders go.",
)
@click.option("--seed", type=int, default=None, help="Seed of the run (default 0).")
@click.option(
    "-cp",
    "--custom-parameter",
    "custom_parameters",
    multiple=True,
    metavar="PATH=VALUE",
    help="Override a parameter, e.g. agent.algorithm.discount=0.98 (repeatable).",
)
@click.option("--device", default="cpu", show_default=True, help="Torch device.")
@click.option("--threads", type=int, default=1, show_default=True, help="Torch CPU threads.")
@click.option("-q", "--quiet", is_flag=True, help="No console output (log.txt is still written).")
def main(
    preset: str | None,
    list_: bool,
    experiment_name: str | None,
    experiment_path: Path,
    seed: int | None,
    custom_parameters: tuple[str, ...],
    device: str,
    threads: int,
    quiet: bool,
) -> None:
    """Run a reinforcement learning experiment from a preset."""
    try:
        if list_:
            _list_presets()
            return
        if not preset:
            _fail("give a preset with -p NAME (coach -l lists them)")
        _run(
            preset,
            experiment_name,
            experiment_path,
            seed,
            custom_parameters,
            device,
            threads,
            quiet,
        )
    except CoachError as error:
        _fail(str(error))


def _run(
    spec: str,
    experiment_name: str | None,
    experiment_path: Path,
    seed: int | None,
    custom_parameters: tuple[str, ...],
    device: str,
    threads: int,
    quiet: bool,
) -> None:
    from coach.graph_managers.graph_manager import RunContext
    from coach.parameters import parse_override, set_parameter
    from coach.presets import load_preset

    preset = load_preset(spec)
    roots = preset.graph_manager.parameters()
    for text in custom_parameters:
        path, value = parse_override(text)
        set_parameter(roots, path, value)
    run_seed = seed if seed is not None else (preset.seed if preset.seed is not None else 0)
    directory = _experiment_dir(experiment_path, experiment_name or preset.name)
    write_params(directory / "params.yaml", preset, run_seed, list(custom_parameters))
    graph = preset.graph_manager
    graph.create_graph(
        RunContext(
            seed=run_seed,
            device=device,
            experiment_dir=directory,
            quiet=quiet,
            num_threads=threads,
            progress_seconds=10.0,
        )
    )
    assert graph.logger is not None
    graph.logger.info(f"{preset.name}: seed {run_seed}, writing to {directory}")
    try:
        graph.improve()
    except KeyboardInterrupt:
        graph.logger.info(f"interrupted at {graph.env_steps} env steps; results in {directory}")
        graph.close()
        sys.exit(EXIT_INTERRUPTED)
    except BaseException:
        graph.close()  # whatever went wrong, what was logged so far reaches the disk
        raise
    best = max(graph.evaluations, key=lambda e: e.mean_reward, default=None)
    if best is not None:
        graph.logger.info(
            f"done: best evaluation mean reward {best.mean_reward:.1f} at {best.env_steps} env "
            f"steps; results in {directory}"
        )
    graph.close()


if __name__ == "__main__":
    main()
