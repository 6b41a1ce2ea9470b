"""What the ``coach`` command line accepts, and how it says no.

Every option value has a type with its range or its choices, checked before anything runs.
A malformed one gets Coach's own single line on stderr, ``coach: error: <what was wrong>``,
and exit status 2, in place of click's usage report over several lines; so does a
`CoachError` (`fail`).
"""

from __future__ import annotations

import math
import os
import sys
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, Protocol, TypeVar

import click

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

SEED = click.IntRange(0, 2**32 - 1)
"""A seed numpy takes as it is (``SeedSequence`` entropy below 2**32)."""


def fail(message: str) -> NoReturn:
    """Print ``coach: error: <message>`` on stderr and exit with status 2."""
    click.echo(f"coach: error: {message}", err=True)
    sys.exit(EXIT_USAGE)


def _one_line(message: str) -> str:
    return " ".join(line.strip() for line in message.splitlines() if line.strip())


def _control_character(text: str) -> str | None:
    """The first control or line-breaking character of ``text``, if any."""
    for character in text:
        if unicodedata.category(character) in ("Cc", "Zl", "Zp"):
            return character
    return None


class Text(click.ParamType[Any]):
    """A word or a name on the command line: any text without control characters (a line
    break in a name would break the error line that quotes it)."""

    name = "text"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = str(value)
        character = _control_character(text)
        if character is not None:
            self.fail(f"{text!r} holds the control character {character!r}", param, ctx)
        return text


class FolderName(Text):
    """One folder name: no path separators, not ``.`` or ``..``."""

    name = "name"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = super().convert(value, param, ctx)
        separators = {"/", os.sep, *([os.altsep] if os.altsep else [])}
        if not text.strip() or text in (".", "..") or any(s in text for s in separators):
            self.fail(f"{text!r} is not a folder name (no '/', not '.' or '..')", param, ctx)
        return text


class PathOption(click.Path):
    """A path, as `click.Path` checks it, without control characters."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        character = _control_character(os.fsdecode(value))
        if character is not None:
            self.fail(f"{value!r} holds the control character {character!r}", param, ctx)
        return super().convert(value, param, ctx)


class Seconds(click.ParamType[Any]):
    """A finite number of seconds, more than 0."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not (math.isfinite(seconds) and seconds > 0):
            self.fail(f"{value!r} is not a number of seconds > 0", param, ctx)
        return seconds


def cpu_threads() -> click.IntRange:
    """1 to this machine's CPUs: torch crashes on a thread count far above them."""
    return click.IntRange(1, os.cpu_count() or 1)


def available_devices() -> list[str]:
    """The torch devices of this machine: ``cpu``, ``cuda`` and ``cuda:N`` for each GPU,
    ``mps`` on Apple silicon."""
    import torch

    devices = ["cpu"]
    count = torch.cuda.device_count()
    if count:
        devices += ["cuda", *(f"cuda:{i}" for i in range(count))]
    if torch.backends.mps.is_available():
        devices.append("mps")
    return devices


class Device(click.ParamType[Any]):
    """A torch device this machine has."""

    name = "device"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        devices = available_devices()
        if value not in devices:
            self.fail(
                f"{value!r} is not a device of this machine; it has {', '.join(devices)}",
                param,
                ctx,
            )
        return value


def _main(
    command: click.Command, args: Sequence[str] | None, prog_name: str | None, extra: Any
) -> NoReturn:
    """Run ``command`` as the program: a usage error is one ``coach: error:`` line, exit 2."""
    try:
        result = click.Command.main(command, args, prog_name, standalone_mode=False, **extra)
    except click.ClickException as error:  # malformed options, and click's own checks
        fail(_one_line(error.format_message()))
    except click.Abort:  # Ctrl-C before the run could take it
        sys.exit(EXIT_INTERRUPTED)
    sys.exit(result if isinstance(result, int) else 0)


class CoachCommand(click.Command):
    """A click command whose usage errors are one ``coach: error:`` line and exit 2."""

    def main(  # type: ignore[override]
        self, args: Sequence[str] | None = None, prog_name: str | None = None, **extra: Any
    ) -> NoReturn:
        _main(self, args, prog_name, extra)


class CoachGroup(click.Group):
    """`CoachCommand` with commands under it (``coach plot``): run without one, it is the
    run command itself."""

    def main(  # type: ignore[override]
        self, args: Sequence[str] | None = None, prog_name: str | None = None, **extra: Any
    ) -> NoReturn:
        _main(self, args, prog_name, extra)


def experiment_path() -> PathOption:
    """Where experiment folders go: a folder (made if missing)."""
    return PathOption(file_okay=False, path_type=Path)


def existing_path(folder_only: bool = False) -> PathOption:
    """A checkpoint or experiment to read: it must exist."""
    return PathOption(exists=True, file_okay=not folder_only, path_type=Path)


MAX_SEEDS = 1000
"""The most seeds one group runs: a typo such as ``0-40000`` is refused, not started."""


class Seeds(click.ParamType[Any]):
    """Seeds of a group: ranges and single seeds separated by commas, ``0-4`` or ``0,3,7``
    or ``0-2,9``; each once, each a `SEED`."""

    name = "seeds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, tuple):
            return value
        text = str(value).strip()
        seeds: list[int] = []
        for part in text.split(","):
            first, dash, last = part.strip().partition("-")
            try:
                low = int(first)
                high = int(last) if dash else low
            except ValueError:
                self.fail(f"{text!r} is not a list of seeds such as 0-4 or 0,3,7", param, ctx)
            if high < low:
                self.fail(f"{part.strip()!r} is a range from high to low", param, ctx)
            if low < 0 or high > SEED.max:  # type: ignore[operator]
                self.fail(f"{part.strip()!r} is outside the seeds 0 to {SEED.max}", param, ctx)
            if len(seeds) + high - low + 1 > MAX_SEEDS:
                self.fail(f"{text!r} is more than {MAX_SEEDS} seeds", param, ctx)
            seeds += range(low, high + 1)
        repeated = sorted({s for s in seeds if seeds.count(s) > 1})
        if repeated:
            self.fail(f"{text!r} names seed {repeated[0]} twice", param, ctx)
        return tuple(seeds)


# Options that several commands take (``coach`` and ``coach tune``), each with its own help.

F = TypeVar("F", bound=Callable[..., Any])


class Decorator(Protocol):
    """An option's decorator: the command it is given, with the option."""

    def __call__(self, command: F, /) -> F: ...


def preset_option(help: str) -> Decorator:
    return click.option("-p", "--preset", type=Text(), help=help)


def experiment_name_option(help: str) -> Decorator:
    return click.option("-e", "--experiment-name", type=FolderName(), help=help)


def seeds_option(help: str) -> Decorator:
    return click.option("--seeds", type=Seeds(), default=None, metavar="0-4|0,3,7", help=help)


def overrides_option(help: str) -> Decorator:
    return click.option(
        "-cp",
        "--custom-parameter",
        "custom_parameters",
        multiple=True,
        metavar="PATH=VALUE",
        help=help,
    )


def jobs_option(help: str) -> Decorator:
    return click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help=help)


def ray_options(backend_help: str) -> Decorator:
    """``--backend local|ray`` and ``--ray-address``."""
    backend = click.option(
        "--backend",
        type=click.Choice(["local", "ray"]),
        default="local",
        show_default=True,
        help=backend_help,
    )
    address = click.option(
        "--ray-address",
        type=Text(),
        default=None,
        metavar="auto|HOST:PORT",
        help="The Ray cluster to join (default: a local runtime on the loopback interface).",
    )

    def both(command: F) -> F:
        return backend(address(command))

    return both


def allow_import_option() -> Decorator:
    """``--allow-import MODULE|FILE.py``: code the files a command reads may name
    (`coach.trust`)."""
    return click.option(
        "--allow-import",
        "allow_import",
        type=Text(),
        multiple=True,
        metavar="MODULE|FILE.py",
        help="Let the files this command reads (YAML presets, params.yaml, group.yaml, "
        "tune.yaml, search spaces) name this module, or Python preset file, to import for "
        "this run (repeatable; see the security page of the docs).",
    )


def resume_option(help: str) -> Decorator:
    return click.option(
        "--resume", type=existing_path(folder_only=True), default=None, metavar="DIR", help=help
    )
