"""The ``coach`` command: run a preset, or list them.

coach -p CartPole_DQN
coach -p CartPole_DQN --seed 3 -cp agent.algorithm.discount=0.98
coach -l
"""

from __future__ import annotations

import shutil
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import click
import numpy as np

from coach.errors import CoachError
from coach.experiment import experiment_dir, write_params

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def _fail(message: str) -> NoReturn:
    click.echo(f"coach: error: {message}", err=True)
    sys.exit(EXIT_USAGE)


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


@dataclass(slots=True)
class RunOptions:
    """The command line, for one run."""

    preset: str | None
    level: str | None
    experiment_name: str | None
    experiment_path: Path
    seed: int | None
    custom_parameters: tuple[str, ...]
    device: str
    threads: int
    quiet: bool
    checkpoint_save_secs: float | None
    save_memory: bool
    checkpoint_restore_dir: Path | None
    resume: Path | None
    evaluate: int | None
    render: bool
    dump_mp4: bool
    dump_gifs: bool
    open_dashboard: bool
    num_workers: int | None
    backend: str
    ray_address: str | None
    evaluation_worker: bool
    record_dataset: str | None


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-p", "--preset", help="Preset name, path/to/preset.py, run.yaml or module:attr.")
@click.option("-l", "--list", "list_", is_flag=True, help="List the presets and exit.")
@click.option(
    "-lvl",
    "--level",
    default=None,
    help="A level of the preset's level set: an Atari game, a MuJoCo or Box2D task.",
)
@click.option("-e", "--experiment-name", help="Experiment folder name (default: the preset's).")
@click.option(
    "-ep",
    "--experiment-path",
    type=Path,
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
@click.option(
    "-s", "--checkpoint-save-secs", type=float, default=None, help="Checkpoint every N seconds."
)
@click.option("--save-memory", is_flag=True, help="Checkpoints also hold the replay memory.")
@click.option(
    "-crd",
    "--checkpoint-restore-dir",
    type=Path,
    default=None,
    help="Start from a checkpoint (a run folder, its checkpoints folder, a file, or "
    "experiments/NAME for its newest run).",
)
@click.option(
    "--resume",
    type=Path,
    default=None,
    metavar="DIR",
    help="Continue the experiment in DIR from its latest checkpoint.",
)
@click.option(
    "--evaluate",
    type=int,
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
    type=int,
    default=None,
    help="Act in N rollout workers; this process learns (default: act here).",
)
@click.option(
    "--backend",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Where the workers run: local processes or Ray actors.",
)
@click.option(
    "--ray-address",
    default=None,
    metavar="auto|HOST:PORT",
    help="The Ray cluster to join (default: a local runtime on the loopback interface).",
)
@click.option(
    "-ew",
    "--evaluation-worker",
    is_flag=True,
    help="Evaluate in a worker of its own, in parallel with training.",
)
@click.option(
    "--record-dataset",
    default=None,
    metavar="NAME",
    help="Record the run's episodes (with --evaluate, the evaluation's) into the local Minari "
    "dataset NAME, e.g. cartpole/dqn-half-v0.",
)
def main(list_: bool, **options: Any) -> None:
    """Run a reinforcement learning experiment from a preset."""
    try:
        if list_:
            _list_presets()
            return
        opts = RunOptions(**options)
        if not opts.preset and opts.resume is None:
            _fail("give a preset with -p NAME (coach -l lists them), or --resume DIR")
        sys.exit(_run(opts))
    except CoachError as error:
        _fail(str(error))


def _prepare(opts: RunOptions) -> tuple[Any, dict[str, Any] | None]:
    """The preset (overrides applied) and the checkpoint to start from: everything that can
    be wrong with the command line is found here, before anything is written."""
    from coach.checkpoints import load_checkpoint
    from coach.parameters import parse_override, set_parameter
    from coach.presets import load_preset

    if opts.resume is not None:
        if opts.preset or opts.checkpoint_restore_dir:
            raise CoachError("--resume takes its preset and checkpoint from the folder it names")
        params = opts.resume / "params.yaml"
        if not params.is_file():
            raise CoachError(f"{opts.resume} is not an experiment folder (no params.yaml)")
        preset = load_preset(str(params))
    else:
        assert opts.preset is not None
        preset = load_preset(opts.preset)
    roots = preset.graph_manager.parameters()
    for text in opts.custom_parameters:
        path, value = parse_override(text)
        set_parameter(roots, path, value)
    environment: Any = roots.get("environment")
    if opts.level is not None:
        if opts.resume is not None:
            raise CoachError("--resume continues the level of the experiment it resumes")
        if not hasattr(environment, "select_level"):
            raise CoachError("this preset's environment has no levels to choose from")
        environment.select_level(opts.level)
    if getattr(environment, "level_set", None) is not None:
        environment.select_level(environment.level)  # a wrong level fails here, not mid-run
    source = opts.resume or opts.checkpoint_restore_dir
    checkpoint = load_checkpoint(source) if source is not None else None
    if checkpoint is not None and checkpoint["preset"] != preset.name:
        raise CoachError(
            f"checkpoint {checkpoint['path']} is from preset {checkpoint['preset']!r}, "
            f"not {preset.name!r}"
        )
    level = getattr(environment, "level", None)
    if checkpoint is not None and checkpoint.get("level") not in (None, level):
        raise CoachError(
            f"checkpoint {checkpoint['path']} is from level {checkpoint['level']!r}, this run "
            f"is on {level!r}"
        )
    if opts.render or opts.dump_mp4 or opts.dump_gifs:
        environment = roots.get("environment")
        if environment is None or not hasattr(environment, "render_mode"):
            raise CoachError("this preset's environment cannot render")
        environment.render_mode = "human" if opts.render else "rgb_array"
    if opts.dump_mp4:
        try:
            import imageio_ffmpeg  # noqa: F401
        except ImportError:
            raise CoachError("-dm needs imageio-ffmpeg: pip install 'coach[video]'") from None
    return preset, checkpoint


def _install_signal_handlers(graph: Any) -> None:
    """The first Ctrl-C (or SIGTERM) stops the run after its current step, with a checkpoint;
    a second one stops it at once."""

    def handler(signum: int, frame: Any) -> None:
        if graph.stop_requested is not None:
            if signum == signal.SIGINT:
                raise KeyboardInterrupt
            raise SystemExit(128 + signum)
        graph.stop_requested = signum

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)


def _run(opts: RunOptions) -> int:
    from coach.core.step_units import EnvironmentEpisodes
    from coach.graph_managers.graph_manager import RunInterrupted
    from coach.graph_managers.parameters import RunContext
    from coach.parallel.distributed import distribute
    from coach.parameters import flatten

    preset, checkpoint = _prepare(opts)
    graph = distribute(  # a bad -n or --backend fails here, before anything is written
        preset.graph_manager,
        opts.num_workers,
        opts.backend,
        opts.ray_address,
        opts.evaluation_worker,
    )
    if opts.record_dataset is not None:  # refused before the run, not after it
        from coach.batch.recording import check_recording

        check_recording(opts.record_dataset, distributed=graph is not preset.graph_manager)
    resuming = opts.resume is not None
    new_folders: list[Path] = []  # what this run creates, parents first; none on resume
    if resuming:
        assert opts.resume is not None and checkpoint is not None
        directory, run_seed = opts.resume, int(checkpoint["seed"])
    else:
        default_name = preset.name if opts.level is None else f"{preset.name}_{opts.level}"
        name = opts.experiment_name or default_name
        new_folders = [
            p for p in (opts.experiment_path, opts.experiment_path / name) if not p.exists()
        ]
        directory = experiment_dir(opts.experiment_path, name)
        new_folders.append(directory)
        run_seed = opts.seed if opts.seed is not None else (preset.seed or 0)
    if not resuming or opts.custom_parameters:
        write_params(directory / "params.yaml", preset, run_seed, list(opts.custom_parameters))
    try:
        graph.create_graph(
            RunContext(
                seed=run_seed,
                device=opts.device,
                experiment_dir=directory,
                quiet=opts.quiet,
                num_threads=opts.threads,
                checkpoint_seconds=opts.checkpoint_save_secs,
                save_memory=opts.save_memory,
                resume=checkpoint if resuming else None,
            )
        )
    except CoachError:
        # The environment or an agent could not be built: leave no experiment behind.
        graph.close()
        if not resuming:
            shutil.rmtree(new_folders.pop())
            for folder in reversed(new_folders):
                folder.rmdir()
        raise
    logger = graph.logger
    assert logger is not None
    if checkpoint is not None and not resuming:
        graph.load_state_dict(checkpoint, whole_run=False)
        logger.info(f"agents restored from {checkpoint['path']}")
    if resuming:
        logger.info(f"resumed from {checkpoint['path']} at {graph.env_steps} env steps")  # type: ignore[index]
    else:
        level = getattr(preset.graph_manager.parameters().get("environment"), "level", None)
        on = f" on {level}" if level else ""
        logger.info(f"{preset.name}{on}: seed {run_seed}, writing to {directory}")
        settable, _ = flatten(preset.graph_manager.parameters())
        logger.hparams(
            "graph",
            {"preset": preset.name, "seed": run_seed, **settable},
            ["Evaluation/mean_reward"],
        )
    if opts.open_dashboard:
        from coach.logging.dashboard import start_dashboard

        url, server = start_dashboard(directory.parent.parent)
        logger.info(f"TensorBoard on {url} (it keeps running; stop it with: kill {server.pid})")
    if opts.dump_mp4 or opts.dump_gifs:
        from coach.logging.video import EvaluationVideo

        graph.video = EvaluationVideo(directory / "videos", mp4=opts.dump_mp4, gif=opts.dump_gifs)
    recorder = None
    if opts.record_dataset:
        from coach.batch.recording import record_run

        command = " ".join(["coach", *sys.argv[1:]])
        recorder = record_run(graph, opts.record_dataset, command, opts.evaluate is not None)
    _install_signal_handlers(graph)
    try:
        if opts.evaluate is not None:
            result = graph.evaluate(EnvironmentEpisodes(opts.evaluate))
            r = np.asarray(result.rewards)
            logger.info(
                f"evaluation over {len(r)} episodes: mean {r.mean():.1f}  std {r.std():.1f}  "
                f"min {r.min():.1f}  max {r.max():.1f}"
            )
        else:
            graph.improve()
            graph.save_checkpoint()
    except RunInterrupted as stop:
        path = graph.save_checkpoint()
        logger.info(
            f"interrupted at {graph.env_steps} env steps; checkpoint {path}; "
            f"continue with: coach --resume {directory}"
        )
        if recorder is not None:  # the whole episodes so far are kept
            recorder.save(logger)
        graph.close()
        return 128 + stop.signum
    except KeyboardInterrupt:
        logger.info(f"interrupted at {graph.env_steps} env steps, without a checkpoint")
        graph.close()
        return EXIT_INTERRUPTED
    except BaseException:
        graph.close()  # whatever went wrong, what was logged so far reaches the disk
        raise
    if recorder is not None:
        recorder.save(logger)
    best = max(graph.evaluations, key=lambda e: e.mean_reward, default=None)
    if best is not None and opts.evaluate is None:
        successes = [e for e in graph.evaluations if e.successes]
        goals = ""
        if successes:  # a goal-based task: its success rate tells more than its reward
            top = max(successes, key=lambda e: e.success_rate)
            goals = f", best success rate {top.success_rate:.2f} at {top.env_steps} env steps"
        from coach.checkpoints import BEST

        kept = directory / "checkpoints" / BEST
        logger.info(
            f"done: best evaluation mean reward {best.mean_reward:.1f} at {best.env_steps} env "
            f"steps{goals}; results in {directory}"
            + (f"; the best agent in {kept}" if kept.is_file() else "")
        )
    graph.close()
    return 0


if __name__ == "__main__":
    main()
