"""A run of the ``coach`` command, from its options to its exit status.

Everything the command line can get wrong is found before the experiment folder is made
(`_prepare`: the preset, the overrides, every parameter's value, the checkpoint). Once the
folder is made, a user error while the run is built (a `CoachError`) removes it again; an
error of Coach itself keeps it, with the traceback in its log.txt and one line on the
console pointing there (exit 1).
"""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from coach.cli_options import EXIT_INTERRUPTED
from coach.cli_workers import distribute, is_asynchronous
from coach.errors import CoachError
from coach.experiment import ExperimentFolder, experiment_dir, write_params
from coach.run_failures import append_to_log, failed_run

if TYPE_CHECKING:  # imported when a run starts, not for --help
    from coach.graph_managers.graph_manager import GraphManager


@dataclass(slots=True)
class RunOptions:
    """The command line, for one run: each field's default is the command's own, so a
    group's seed or a tuning trial names only what it sets."""

    preset: str | None = None
    level: str | None = None
    experiment_name: str | None = None
    experiment_path: Path = Path("experiments")
    seed: int | None = None
    custom_parameters: tuple[str, ...] = ()
    device: str | None = None
    """``--device``; ``None``: cpu, or on ``--resume`` the device the run had."""
    threads: int | None = None
    """``--threads``; ``None``: 1, or on ``--resume`` the threads the run had."""
    quiet: bool = False
    checkpoint_save_secs: float | None = None
    save_memory: bool = False
    checkpoint_restore_dir: Path | None = None
    resume: Path | None = None
    evaluate: int | None = None
    render: bool = False
    dump_mp4: bool = False
    dump_gifs: bool = False
    open_dashboard: bool = False
    num_workers: int | None = None
    backend: str = "local"
    ray_address: str | None = None
    evaluation_worker: bool = False
    record_dataset: str | None = None
    seeds: tuple[int, ...] | None = None
    """``--seeds``: run these seeds as a group (`coach.studies.group`)."""
    jobs: int | None = None
    """``-j``: how many seeds of a group run at once."""
    run_dir: Path | None = None
    """The run's folder, made by its group (not a command-line option)."""
    allow_import: tuple[str, ...] = ()
    """``--allow-import``: the modules and preset files the files read may name."""
    read_from: str | None = None
    """The file ``preset`` and ``custom_parameters`` were read from (a group's
    ``group.yaml``), where they were not typed: they then name code only as ``allow_import``
    allows (`coach.trust`)."""


def _prepare(opts: RunOptions) -> tuple[Any, dict[str, Any] | None]:
    """The preset (overrides applied) and the checkpoint to start from: everything that can
    be wrong with the command line is found here, before anything is written."""
    from coach.checkpoints import load_checkpoint
    from coach.cli_resume import check_unchanged
    from coach.parameters import apply_overrides
    from coach.presets import load_preset, presets_dir
    from coach.trust import AllowedImports, FileSource, check_preset_spec

    allowed = AllowedImports(opts.allow_import)
    read_from = FileSource(opts.read_from, allowed) if opts.read_from is not None else None
    if opts.resume is not None:
        if opts.preset or opts.checkpoint_restore_dir:
            raise CoachError("--resume takes its preset and checkpoint from the folder it names")
        params = opts.resume / "params.yaml"
        if not params.is_file():
            raise CoachError(f"{opts.resume} is not an experiment folder (no params.yaml)")
        preset = load_preset(str(params), allowed)
    else:
        assert opts.preset is not None
        if read_from is not None:
            check_preset_spec(opts.preset, allowed, read_from.path, presets_dir())
        preset = load_preset(opts.preset, allowed)
    roots = preset.graph_manager.parameters()
    apply_overrides(roots, opts.custom_parameters, read_from)
    environment: Any = roots.get("environment")
    if opts.level is not None:
        if opts.resume is not None:
            raise CoachError("--resume continues the level of the experiment it resumes")
        if not hasattr(environment, "select_level"):
            raise CoachError("this preset's environment has no levels to choose from")
        environment.select_level(opts.level)
    if getattr(environment, "level_set", None) is not None:
        environment.select_level(environment.level)  # a wrong level fails here, not mid-run
    preset.graph_manager.validate()  # every value in range, before anything is written
    source = opts.resume or opts.checkpoint_restore_dir
    checkpoint = load_checkpoint(source) if source is not None else None
    if checkpoint is not None and checkpoint["preset"] != preset.name:
        raise CoachError(
            f"checkpoint {checkpoint['path']} is from preset {checkpoint['preset']!r}, "
            f"not {preset.name!r}"
        )
    if opts.resume is not None:
        assert checkpoint is not None
        check_unchanged(checkpoint, roots, opts.resume, opts.custom_parameters)
    saved = checkpoint.get("level") if checkpoint is not None else None
    if checkpoint is not None and saved is not None:
        from coach.environments.levels import same_level  # the level sets: only when restoring

        level = getattr(environment, "level", None)
        if not same_level(getattr(environment, "level_set", None), saved, level):
            raise CoachError(
                f"checkpoint {checkpoint['path']} is from level {saved!r}, this run is on {level!r}"
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


def run(
    opts: RunOptions, watch: Callable[[GraphManager], None] | None = None, signals: bool = True
) -> int:
    """The run of the command line: checked whole before its folder is made; a user error
    (a `CoachError`) while it is built leaves no folder behind, an internal error keeps the
    folder with its traceback in log.txt. ``watch`` is given the graph once it is built,
    before it runs (a group follows its seeds so); without ``signals`` the run leaves
    SIGINT and SIGTERM alone (its group stops it through ``graph.stop_requested``)."""
    preset, checkpoint = _prepare(opts)
    graph = distribute(
        preset.graph_manager,
        opts.num_workers,
        opts.backend,
        opts.ray_address,
        opts.evaluation_worker,
    )  # a bad -n fails before anything is written
    if opts.record_dataset is not None:  # refused before the run, not after it
        from coach.batch.recording import check_recording

        # Asynchronous workers train elsewhere; this process only evaluates.
        elsewhere = graph is not preset.graph_manager or (
            opts.evaluate is None and is_asynchronous(graph)
        )
        check_recording(
            opts.record_dataset,
            distributed=elsewhere,
            graph=preset.graph_manager,
            evaluating=opts.evaluate is not None,
        )
    folder: ExperimentFolder | None = None
    if opts.resume is not None:
        assert checkpoint is not None
        directory, run_seed = opts.resume, int(checkpoint["seed"])
    elif opts.run_dir is not None:
        directory = opts.run_dir
        run_seed = opts.seed if opts.seed is not None else (preset.seed or 0)
    else:
        default_name = preset.name if opts.level is None else f"{preset.name}_{opts.level}"
        folder = experiment_dir(opts.experiment_path, opts.experiment_name or default_name)
        directory = folder.path
        run_seed = opts.seed if opts.seed is not None else (preset.seed or 0)
    try:
        recorder = _start(graph, preset, opts, directory, run_seed, checkpoint)
        if signals:
            _install_signal_handlers(graph)
    except CoachError:
        # The environment or an agent could not be built: leave no experiment behind.
        _close(graph)
        if folder is not None:
            folder.remove()
        raise
    except Exception as error:
        _close(graph)
        return failed_run(error, directory)
    except BaseException:
        _close(graph)
        raise
    del checkpoint  # restored: the run does not hold a second copy of its replay
    try:
        if watch is not None:
            watch(graph)
        return _drive(graph, opts, directory, recorder)
    except CoachError as error:
        _close(graph)
        append_to_log(directory, f"coach: error: {error}")
        raise
    except Exception as error:
        _close(graph)
        return failed_run(error, directory)
    except BaseException:
        _close(graph)  # whatever went wrong, what was logged so far reaches the disk
        raise


def _start(
    graph: Any,
    preset: Any,
    opts: RunOptions,
    directory: Path,
    run_seed: int,
    checkpoint: dict[str, Any] | None,
) -> Any:
    """Write params.yaml, build the graph and restore what it starts from; returns the
    dataset recorder of ``--record-dataset``, if any."""
    from coach.cli_resume import changes_asked_for, device_and_threads
    from coach.graph_managers.parameters import RunContext
    from coach.parameter_tree import flatten

    resuming = opts.resume is not None
    resumed = checkpoint if resuming else None
    device, threads = device_and_threads(opts.device, opts.threads, resumed)
    changed = changes_asked_for(resumed, preset.graph_manager.parameters())
    if not resuming or opts.custom_parameters:
        write_params(
            directory / "params.yaml",
            preset,
            run_seed,
            list(opts.custom_parameters),
            changed_on_resume=changed,
        )
    graph.create_graph(
        RunContext(
            seed=run_seed,
            device=device,
            experiment_dir=directory,
            quiet=opts.quiet,
            num_threads=threads,
            checkpoint_seconds=opts.checkpoint_save_secs,
            save_memory=opts.save_memory,
            resume=checkpoint if resuming else None,
        )
    )
    logger = graph.logger
    assert logger is not None
    if checkpoint is not None and not resuming:
        graph.load_state_dict(checkpoint, whole_run=False)
        logger.info(f"agents restored from {checkpoint['path']}")
    if checkpoint is not None and resuming:
        logger.info(f"resumed from {checkpoint['path']} at {graph.env_steps} env steps")
        if changed is not None:
            logger.info(
                f"resumed with changed parameters, as -cp asked: {changed}; the numbers will "
                "differ from an uninterrupted run's"
            )
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
    logger.info(_agent_classes(preset.graph_manager.parameters()))
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
    return recorder


def _drive(graph: Any, opts: RunOptions, directory: Path, recorder: Any) -> int:
    """Train (or only evaluate) until the budget is spent or a signal stops the run."""
    from coach.checkpoints import BEST
    from coach.core.step_units import EnvironmentEpisodes
    from coach.errors import RunInterrupted

    logger = graph.logger
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
    if recorder is not None:
        recorder.save(logger)
    best = max(graph.evaluations, key=lambda e: e.mean_reward, default=None)
    if best is not None and opts.evaluate is None:
        successes = [e for e in graph.evaluations if e.successes]
        goals = ""
        if successes:  # a goal-based task: its success rate tells more than its reward
            top = max(successes, key=lambda e: e.success_rate)
            goals = f", best success rate {top.success_rate:.2f} at {top.env_steps} env steps"
        kept = directory / "checkpoints" / BEST
        logger.info(
            f"done: best evaluation mean reward {best.mean_reward:.1f} at {best.env_steps} env "
            f"steps{goals}; results in {directory}"
            + (f"; the best agent in {kept}" if kept.is_file() else "")
        )
    graph.close()
    return 0


def _close(graph: Any) -> None:
    """Close a run that failed: what was logged so far reaches the disk. An error while
    closing is not the one to report."""
    with contextlib.suppress(Exception):
        graph.close()


def _agent_classes(roots: dict[str, Any]) -> str:
    """The log's line of the agent classes a run builds (``agent class: module.Class``, or one
    ``path module.Class`` pair for each agent of a graph of several)."""
    from coach.agents.parameters import agent_classes

    classes = agent_classes(roots)
    if list(classes) == ["agent"]:
        return f"agent class: {classes['agent']}"
    return "agent classes: " + ", ".join(f"{path} {name}" for path, name in classes.items())
