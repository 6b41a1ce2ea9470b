"""``coach export -crd RUN``: a run's acting policy as an ONNX or TorchScript file.

The file maps a batch of observations to the actions Coach's greedy evaluation would send to
the environment (the input filter's normalization folded in, the output filter too), and
runs with onnxruntime or ``torch.jit.load`` alone (`coach.export`).
"""

from __future__ import annotations

from pathlib import Path

import click

from coach import cli_options
from coach.cli_options import fail
from coach.errors import CoachError


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "-crd",
    "--checkpoint-restore-dir",
    "source",
    required=True,
    # Checked by the checkpoint loader, whose error names what a checkpoint may be.
    type=cli_options.PathOption(path_type=Path),
    help="The run to export (a run folder, its checkpoints folder, a checkpoint file such as "
    "checkpoints/best.pt, or experiments/NAME for its newest run).",
)
@click.option(
    "--format",
    "file_format",
    type=click.Choice(["onnx", "torchscript"]),
    default="onnx",
    show_default=True,
    help="ONNX (runs with onnxruntime) or TorchScript (runs with torch.jit.load).",
)
@click.option(
    "-o",
    "--output",
    type=cli_options.PathOption(dir_okay=False, path_type=Path),
    default=None,
    help="The file to write (default: export/policy.onnx or .pt in the run's folder).",
)
@click.option(
    "-p",
    "--preset",
    type=cli_options.Text(),
    default=None,
    help="The preset the run was made from, when its params.yaml names one that is not found "
    "by name (a preset file of your own).",
)
@cli_options.allow_import_option()
def export(
    source: Path,
    file_format: str,
    output: Path | None,
    preset: str | None,
    allow_import: tuple[str, ...],
) -> None:
    """Write a run's acting policy (greedy, filters folded in) as a file."""
    from coach.export.files import export_run
    from coach.trust import AllowedImports

    try:
        allowed = AllowedImports(allow_import)
        click.echo(str(export_run(source, file_format, output, preset, allowed)))
    except CoachError as error:
        fail(str(error))
