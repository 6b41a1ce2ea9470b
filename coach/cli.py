"""The ``coach`` command: run a preset, list them, make figures of runs, or export a run's
policy.

coach -p CartPole_DQN
coach -p CartPole_DQN --seed 3 -cp agent.algorithm.discount=0.98
coach -p CartPole_DQN --seeds 0-4 -j 2
coach -l
coach plot experiments/CartPole_DQN experiments/CartPole_DDQN
coach export -crd experiments/CartPole_DQN --format onnx
coach tune -p CartPole_DQN --space space.yaml --trials 20 -j 2
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from coach import cli_options
from coach.cli_export import export
from coach.cli_options import CoachGroup, fail
from coach.cli_plot import plot
from coach.cli_run import RunOptions, run
from coach.cli_tune import tune
from coach.errors import CoachError
from coach.studies.group import is_group, run_group


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


@click.group(
    cls=CoachGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@cli_options.preset_option("Preset name, path/to/preset.py, run.yaml or module:attr.")
@click.option("-l", "--list", "list_", is_flag=True, help="List the presets and exit.")
@click.option(
    "-lvl",
    "--level",
    type=cli_options.Text(),
    default=None,
    help="A level of the preset's level set: an Atari game, a MuJoCo or Box2D task.",
)
@cli_options.experiment_name_option("Experiment folder name (default: the preset's).")
@click.option(
    "-ep",
    "--experiment-path",
    type=cli_options.experiment_path(),
    default=Path("experiments"),
    show_default=True,
    help="Where experiment folders go.",
)
@click.option(
    "--seed",
    type=cli_options.SEED,
    default=None,
    help="Seed of the run, 0 to 2**32 - 1 (default 0).",
)
@cli_options.seeds_option("Run these seeds as one group: experiments/NAME/<timestamp>/seed_<k>/.")
@cli_options.jobs_option("How many seeds of a group run at once (default: this machine's cores).")
@cli_options.overrides_option(
    "Override a parameter, e.g. agent.algorithm.discount=0.98 (repeatable)."
)
@click.option(
    "--device",
    type=cli_options.Device(),
    default=None,
    help="Torch device: cpu, cuda, cuda:N or mps, as this machine has them (default: cpu; "
    "on --resume, the run's own).",
)
@click.option(
    "--threads",
    type=cli_options.cpu_threads(),
    default=None,
    help="Torch CPU threads, at most this machine's CPUs (default: 1; on --resume, the run's own).",
)
@click.option("-q", "--quiet", is_flag=True, help="No console output (log.txt is still written).")
@click.option(
    "-s",
    "--checkpoint-save-secs",
    type=cli_options.Seconds(),
    default=None,
    help="Checkpoint every N seconds (N > 0).",
)
@click.option("--save-memory", is_flag=True, help="Checkpoints also hold the replay memory.")
@click.option(
    "-crd",
    "--checkpoint-restore-dir",
    # Checked by the checkpoint loader, whose error names what a checkpoint may be.
    type=cli_options.PathOption(path_type=Path),
    default=None,
    help="Start from a checkpoint (a run folder, its checkpoints folder, a file, or "
    "experiments/NAME for its newest run).",
)
@cli_options.resume_option("Continue the experiment (or group) in DIR from its latest checkpoint.")
@cli_options.allow_import_option()
@click.option(
    "--evaluate",
    type=click.IntRange(min=1),
    is_flag=False,
    flag_value=10,
    default=None,
    metavar="[N]",
    help="Only evaluate, for N episodes (default 10), e.g. with -crd.",
)
@click.option("-r", "--render", is_flag=True, help="Show the environment while it runs.")
@click.option("-dm", "--dump-mp4", is_flag=True, help="Save evaluation episodes as mp4.")
@click.option("-dg", "--dump-gifs", is_flag=True, help="Save evaluation episodes as GIFs.")
@click.option(
    "-d", "--open-dashboard", is_flag=True, help="Start TensorBoard on the experiment path."
)
@click.option(
    "-n",
    "--num-workers",
    type=click.IntRange(min=1),
    default=None,
    help=(
        "Act in N rollout workers; this process learns (default: act here). For an "
        "asynchronous preset (CartPole_A3C): N workers that act and learn."
    ),
)
@cli_options.ray_options("Where the workers (or a group's seeds) run: local processes or Ray.")
@click.option(
    "-ew",
    "--evaluation-worker",
    is_flag=True,
    help="Evaluate in a worker of its own, in parallel with training.",
)
@click.option(
    "--record-dataset",
    type=cli_options.Text(),
    default=None,
    metavar="NAME",
    help="Record the run's episodes (with --evaluate, the evaluation's) into the local Minari "
    "dataset NAME, e.g. cartpole/dqn-half-v0.",
)
@click.pass_context
def main(ctx: click.Context, /, list_: bool, **options: Any) -> None:
    """Run a reinforcement learning experiment from a preset, or a command on runs (coach
    plot PATH... draws their evaluation curves, coach export -crd RUN writes a run's policy
    as an ONNX or TorchScript file)."""
    if ctx.invoked_subcommand is not None:
        given = [
            name
            for name in ("list_", *options)
            if ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE
        ]
        if given:
            fail(f"coach {ctx.invoked_subcommand} takes no run options; give its own after it")
        return
    try:
        if list_:
            _list_presets()
            return
        opts = RunOptions(**options)
        if not opts.preset and opts.resume is None:
            fail("give a preset with -p NAME (coach -l lists them), or --resume DIR")
        if opts.seeds is not None or (opts.resume is not None and is_group(opts.resume)):
            sys.exit(run_group(opts))
        if opts.jobs is not None:
            fail("-j runs the seeds of a group at once: give --seeds too")
        sys.exit(run(opts))
    except CoachError as error:
        fail(str(error))


main.add_command(plot)
main.add_command(export)
main.add_command(tune)

if __name__ == "__main__":
    main()
