"""``coach export``: a run's acting policy written as an ONNX or TorchScript file.

The run's agent is rebuilt from the preset of the run's ``params.yaml`` (or one named with
``-p``, the run's parameters applied over it) and restored from the checkpoint, as
``coach --evaluate -crd`` restores it; it is built to act only, as a rollout worker's agent
(no memory, optimizers or target networks), where the graph runs on workers. Its policy
becomes an `ExportedPolicy`, which is traced into the file:

- ONNX, with torch's exporter (``torch.onnx.export``, which needs the ``onnx`` and
  ``onnxscript`` packages: ``pip install 'coach[export]'``); the batch axis of every input
  and of the output is dynamic (a policy whose code fixes the batch size is refused). It
  runs with ``onnxruntime`` and numpy alone.
- TorchScript, with ``torch.jit.trace``; it runs with ``torch.jit.load``, without Coach.

Either file takes one float32 input per observation key (named after it: ``observation``
for an environment of a single array), shaped ``(N, ...)``, and gives ``action``, ``(N, ...)``:
int64 for an environment of integer actions, float32 for continuous ones.
"""

from __future__ import annotations

import contextlib
import io
import logging
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from coach.errors import CoachError
from coach.trust import AllowedImports, ImportNotAllowed

if TYPE_CHECKING:
    from coach.export.policy import ExportedPolicy
    from coach.graph_managers.graph_manager import GraphManager
    from coach.level_manager import Level

FORMATS = {"onnx": ".onnx", "torchscript": ".pt"}
"""The file formats, with the suffix of their default file name."""
OPSET = 18
"""The ONNX operator set the files use: the lowest torch's exporter writes, which
onnxruntime runs from version 1.14 on."""


def restore_level(
    source: Path, preset: str | None = None, allowed: AllowedImports | None = None
) -> Level:
    """The level of the run whose checkpoint ``source`` is (or holds), its agents restored
    from that checkpoint, acting only where the graph can build them so (as a rollout worker
    does: no memories, optimizers or target networks); close it when done.

    Args:
        source: What ``coach -crd`` takes: a run's folder, its checkpoints folder, a
            checkpoint file, or ``experiments/NAME`` for its newest run.
        preset: The preset the run was made from, where its ``params.yaml`` names one that
            is not found by name (a preset file of the user's); ``params.yaml``'s parameters
            are applied over it.
        allowed: The modules and preset files ``params.yaml`` may name (``--allow-import``;
            `coach.trust`).

    Raises:
        CoachError: no checkpoint there, no ``params.yaml`` beside it, parameters that do
            not build the graph, a graph of several levels, or agents that do not fit the
            checkpoint.
    """
    from coach.checkpoints import load_checkpoint
    from coach.presets import load_run_preset

    checkpoint = load_checkpoint(source)
    run = Path(checkpoint["path"]).parent.parent
    params = run / "params.yaml"
    if not params.is_file():
        raise CoachError(
            f"{checkpoint['path']} has no params.yaml in its run's folder {run}: export the "
            f"checkpoints of a run folder"
        )
    try:
        loaded = load_run_preset(params, preset, allowed)
    except ImportNotAllowed:  # it says what to give
        raise
    except CoachError as error:
        if preset is not None:
            raise
        raise CoachError(
            f"{params}: {error} (for a run of a preset file of your own, give that file with "
            f"-p PATH)"
        ) from None
    if checkpoint["preset"] != loaded.name:
        raise CoachError(
            f"checkpoint {checkpoint['path']} is from preset {checkpoint['preset']!r}, "
            f"not {loaded.name!r}"
        )
    graph = loaded.graph_manager
    graph.validate()
    if len(checkpoint["agents"]) != 1:
        raise CoachError(
            f"{loaded.name} is hierarchical ({len(checkpoint['agents'])} levels): only one "
            f"agent acting alone in its environment can be exported"
        )
    try:
        level = _acting_level(graph, int(checkpoint["seed"]))
    except CoachError:
        raise
    except Exception as error:
        # What params.yaml holds was edited, or its environment is broken on this machine:
        # there is no run folder to keep a traceback in, and the user can mend the file.
        lines = str(error).strip().splitlines()
        what = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
        raise CoachError(
            f"the parameters in {params} do not build the run's agent and environment: {what}"
        ) from None
    try:
        level.load_agents_state_dict(checkpoint["agents"][0], episodes_in_flight=False)
    except (RuntimeError, KeyError, ValueError) as error:
        level.close()
        first_line = str(error).strip().splitlines()[0]
        raise CoachError(
            f"{checkpoint['path']} does not fit its preset's agents: {first_line}"
        ) from None
    except BaseException:
        level.close()
        raise
    return level


def _acting_level(graph: GraphManager, seed: int) -> Level:
    """The one level of ``graph``, its agents acting only where the graph builds them so
    for rollout workers, else as a run builds them."""
    from coach.agents.log import NullLog
    from coach.graph_managers.parameters import RunContext
    from coach.parallel.worker import RunsOnWorkers

    if isinstance(graph, RunsOnWorkers):
        acting = None
        with contextlib.suppress(CoachError):  # batch RL acts in no worker
            acting = graph.acting_graph()
        if acting is not None:
            return acting.build(seed, lambda name: NullLog())
    graph.create_graph(RunContext(seed=seed, quiet=True))
    return graph.top_level


def exported_policy(level: Level) -> ExportedPolicy:
    """The acting policy of a level's one agent, as a torch module.

    Raises:
        CoachError: the level is multi-agent, or its agent's policy cannot be exported
            (`ExportedPolicy`).
    """
    from coach.export.policy import ExportedPolicy
    from coach.level_manager import LevelManager

    if not isinstance(level, LevelManager):
        raise CoachError(
            f"the run's level is multi-agent (agents {', '.join(level.agents)}): only one "
            f"agent acting alone in its environment can be exported"
        )
    environment = level.environment
    return ExportedPolicy(level.agent, environment.observation_space, environment.action_space)


def write_onnx(policy: ExportedPolicy, path: Path) -> None:
    """Write ``policy`` as an ONNX file, its batch axes dynamic."""
    try:
        import onnx  # noqa: F401
        import onnxscript  # noqa: F401
    except ImportError:
        raise CoachError(
            "--format onnx needs the onnx and onnxscript packages: pip install 'coach[export]'"
        ) from None
    # The exporter reports its steps on stdout and logs notes (operators of packages that
    # are not installed): the command prints the file's path alone.
    log = logging.getLogger("torch.onnx")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        with (
            warnings.catch_warnings(),
            contextlib.redirect_stdout(io.StringIO()),
            torch.no_grad(),
        ):
            warnings.simplefilter("ignore")
            torch.onnx.export(
                captured_program(policy),
                policy.example_inputs(),
                str(path),
                input_names=policy.keys,
                output_names=["action"],
                opset_version=OPSET,
                external_data=False,
                dynamo=True,
            )
    finally:
        log.setLevel(level)


def captured_program(policy: ExportedPolicy) -> torch.export.ExportedProgram:
    """``policy`` captured by ``torch.export`` with a dynamic batch axis on every input.

    Captured here rather than by ``torch.onnx.export``, which falls back to a draft export
    that fixes the batch at the example's when the policy's code reads the batch size as a
    number (``len(x)``): a file that runs at one batch size only. Here that is an error.

    Raises:
        CoachError: the policy's code fixes the batch size (or torch.export cannot capture
            it at all).
    """
    batch = torch.export.Dim("batch", min=1)
    dynamic = (tuple({0: batch} for _ in policy.keys),)  # of *observations
    try:
        with torch.no_grad():
            return torch.export.export(policy, policy.example_inputs(), dynamic_shapes=dynamic)
    except Exception as error:  # torch's error types for it are private
        first_line = str(error).strip().splitlines()[0]
        raise CoachError(
            f"torch.export cannot capture the policy with a dynamic batch axis ({first_line}): "
            f"its networks must take the batch size from their tensors' shapes, not as a number"
        ) from None


def write_torchscript(policy: ExportedPolicy, path: Path) -> None:
    """Write ``policy`` as a TorchScript file (traced)."""
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(  # type: ignore[no-untyped-call]
            policy, policy.example_inputs(), check_trace=False
        )
        # A trace records a batch size read as a number (``len(x)``) as a constant: the
        # file must act on a batch of another size, row for row as the policy does.
        other = policy.example_inputs(batch=3)
        try:
            works = traced(*other).shape == policy(*other).shape
        except RuntimeError:
            works = False
        if not works:
            raise CoachError(
                "the policy's computation fixes its batch size, so no file with a dynamic "
                "batch axis can be written: its networks must take the batch size from their "
                "tensors' shapes, not as a number"
            )
        torch.jit.save(traced, str(path))


def default_output(source: Path, file_format: str) -> Path:
    """Where ``coach export`` writes by default: ``export/policy.<suffix>`` in the run's
    folder (of the checkpoint ``source`` stands for)."""
    from coach.checkpoints import find_checkpoint

    run = find_checkpoint(source).parent.parent
    return run / "export" / f"policy{FORMATS[file_format]}"


def export_run(
    source: Path,
    file_format: str = "onnx",
    output: Path | None = None,
    preset: str | None = None,
    allowed: AllowedImports | None = None,
) -> Path:
    """Write the acting policy of the run's checkpoint ``source`` as a file; returns its path.

    Args:
        source: The checkpoint, as ``coach -crd`` takes it (see `restore_graph`).
        file_format: ``onnx`` or ``torchscript``.
        output: The file to write (default: `default_output`).
        preset: The preset the run was made from, if its ``params.yaml`` cannot name it.
        allowed: What ``params.yaml`` may name (see `restore_level`).

    Raises:
        CoachError: what cannot be exported, or written there.
    """
    if file_format not in FORMATS:
        raise CoachError(f"no export format {file_format!r}; choose from {', '.join(FORMATS)}")
    level = restore_level(source, preset, allowed)
    try:
        policy = exported_policy(level)
        path = output if output is not None else default_output(source, file_format)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise CoachError(f"cannot write {path}: {error.strerror}") from None
        if path.is_dir():
            raise CoachError(f"{path} is a folder; give a file name to write")
        write: Any = write_onnx if file_format == "onnx" else write_torchscript
        write(policy, path)
    finally:
        level.close()
    return path
