"""``coach tune -p PRESET --space space.yaml --trials N``: tune a preset's parameters with Optuna.

Everything the command line and the space file can get wrong is found before the study's
folder is made: the preset, the overrides, the space (`coach.studies.search_space`: its
shape, and each range's ends tried on the preset). The study itself is
`coach.studies.tuning`; ``--resume DIR`` goes on with one.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from coach import cli_options
from coach.cli_options import fail
from coach.errors import CoachError


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@cli_options.preset_option("Preset to tune: a name, path/to/preset.py, run.yaml or module:attr.")
@click.option(
    "--space",
    type=cli_options.existing_path(),
    help="The search space: a YAML file of -cp paths and their ranges.",
)
@click.option("--trials", type=click.IntRange(min=1), help="Trials to finish.")
@cli_options.jobs_option("Trials at once (default 1).")
@cli_options.experiment_name_option("The study's folder name (default: the preset's, with _tune).")
@click.option(
    "-ep",
    "--experiment-path",
    type=cli_options.experiment_path(),
    default=None,
    help="Where experiment folders go (default ./experiments).",
)
@click.option(
    "--seed",
    type=cli_options.SEED,
    default=None,
    help="Every trial's seed, and the sampler's (default 0).",
)
@cli_options.seeds_option(
    "Run every trial on each of these seeds; it scores their mean (in place of --seed)."
)
@cli_options.overrides_option("Override a parameter in every trial (repeatable).")
@click.option(
    "--device",
    type=cli_options.Device(),
    default=None,
    help="Torch device of the trials (default cpu).",
)
@cli_options.ray_options("Where the trials run: processes on this machine, or Ray tasks.")
@cli_options.resume_option("Go on with the study in DIR (--trials N raises its total).")
@cli_options.allow_import_option()
def tune(resume: Path | None, **options: Any) -> None:
    """Tune a preset's parameters: an Optuna study whose trials are runs of the preset."""
    try:
        try:
            import optuna  # noqa: F401
        except ImportError:
            raise CoachError("coach tune needs Optuna: pip install 'coach[study]'") from None
        if options["ray_address"] is not None and options["backend"] != "ray":
            raise CoachError("--ray-address goes with --backend ray")
        sys.exit(_resume(resume, options) if resume is not None else _start(options))
    except CoachError as error:
        fail(str(error))


def _checked(
    preset_spec: str,
    overrides: list[str],
    space: Any,
    where: str,
    allow_import: tuple[str, ...],
    read_from: str | None = None,
) -> Any:
    """The preset with the study's overrides, checked whole, and the space checked on it.

    ``read_from``: the file the preset and overrides were read from (a study's tune.yaml),
    where the user did not type them; they then name code only as allowed (`coach.trust`).
    """
    from coach.parameters import apply_overrides, parse_override
    from coach.presets import load_preset, presets_dir
    from coach.studies.search_space import check_space
    from coach.trust import AllowedImports, FileSource, check_preset_spec

    allowed = AllowedImports(allow_import)
    source = FileSource(read_from, allowed) if read_from is not None else None
    if read_from is not None:
        check_preset_spec(preset_spec, allowed, read_from, presets_dir())
    preset = load_preset(preset_spec, allowed)
    graph = preset.graph_manager
    apply_overrides(graph.parameters(), overrides, source)
    overridden = {parse_override(text)[0] for text in overrides}
    for dimension in space.dimensions:  # a trial's value would go after, and be refused
        if dimension.path in overridden:
            raise CoachError(f"{where}: {dimension.path} is searched and set by -cp: give one")
    graph.validate()
    if graph.schedule_params.evaluation_steps.num_steps <= 0:
        raise CoachError(
            f"{preset.name} makes no evaluations (schedule.evaluation_steps is 0): "
            f"a trial has nothing to be scored by"
        )
    check_space(space, graph, where, allowed)
    return preset


def _start(options: dict[str, Any]) -> int:
    from coach.experiment import experiment_dir
    from coach.studies.search_space import read_space
    from coach.studies.tuning import StudySettings, tune

    preset_spec, space_path, trials = options["preset"], options["space"], options["trials"]
    if not preset_spec or space_path is None or trials is None:
        raise CoachError(
            "coach tune needs -p PRESET, --space FILE and --trials N (or --resume DIR)"
        )
    space = read_space(space_path)
    overrides = list(options["custom_parameters"])
    preset = _checked(preset_spec, overrides, space, str(space_path), options["allow_import"])
    if Path(preset_spec).is_file():  # found again from anywhere: best.yaml, --resume
        preset_spec = str(Path(preset_spec).resolve())
    if options["seed"] is not None and options["seeds"] is not None:
        raise CoachError("give --seed or --seeds, not both")
    seed = options["seed"] if options["seed"] is not None else (preset.seed or 0)
    name = options["experiment_name"] or f"{preset.name}_tune"
    folder = experiment_dir(options["experiment_path"] or Path("experiments"), name)
    settings = StudySettings(
        preset=preset_spec,
        trials=trials,
        jobs=options["jobs"] or 1,
        device=options["device"] or "cpu",
        name=name,
        space=space.document,
        overrides=overrides,
        seeds=list(options["seeds"] or [seed]),
    )
    settings.write(folder.path)
    try:
        return tune(
            folder.path,
            settings,
            space,
            options["backend"],
            options["ray_address"],
            False,
            options["allow_import"],
        )
    except CoachError:
        if not any(folder.path.glob("trial_*")):  # nothing ran: leave nothing behind
            folder.remove()
        raise


def _resume(folder: Path, options: dict[str, Any]) -> int:
    from coach.studies.search_space import parse_space
    from coach.studies.tuning import SETTINGS, StudySettings, tune

    taken = ("preset", "space", "experiment_name", "experiment_path", "seed", "seeds")
    given = [name for name in taken if options[name] is not None] + (
        ["custom_parameters"] if options["custom_parameters"] else []
    )
    if given:
        raise CoachError(
            "--resume takes the preset, space, seeds and overrides from the study's folder; "
            f"leave out --{given[0].replace('_', '-')}"
        )
    settings = StudySettings.read(folder)
    space = parse_space(settings.space, str(folder / SETTINGS))
    where = str(folder / SETTINGS)
    _checked(settings.preset, settings.overrides, space, where, options["allow_import"], where)
    settings.trials = options["trials"] or settings.trials
    settings.jobs = options["jobs"] or settings.jobs
    settings.device = options["device"] or settings.device
    settings.write(folder)
    backend, address = options["backend"], options["ray_address"]
    return tune(folder, settings, space, backend, address, True, options["allow_import"])
