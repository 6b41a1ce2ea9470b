"""Running the documentation's code blocks, each kind as `tests.docs.blocks` describes."""

from __future__ import annotations

import ast
import os
import re
import shlex
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import click
import yaml

from coach.cli import main as coach_command
from coach.core.step_units import EnvironmentSteps
from coach.graph_managers.parameters import RunContext
from coach.presets import load_preset
from coach.trust import AllowedImports
from tests.docs.blocks import ROOT, Block, commands, expected_line, transcript

FILE_COMMENT = re.compile(r"^#\s*file:\s*(?P<name>\S+)\s*$")
"""A block whose first line is ``# file: NAME`` is also written to NAME in the scratch folder
(a preset a later command runs, say)."""


PLACEHOLDER = re.compile(r"<[\w .,-]+>")
"""A word for the reader to fill in (``<timestamp>``, ``<run folder>``)."""


def file_name(block: Block) -> str | None:
    first = block.text.splitlines()[0] if block.text.strip() else ""
    match = FILE_COMMENT.match(first)
    return match["name"] if match else None


def is_preset(source: str) -> bool:
    """Whether Python source assigns a module-level ``graph_manager``."""
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == "graph_manager" for t in targets):
            return True
    return False


def run_preset_briefly(path: Path, scratch: Path) -> None:
    """Load a preset file, build its graph and run a few steps of heatup and training."""
    graph = load_preset(str(path)).graph_manager
    graph.create_graph(RunContext(seed=0, experiment_dir=scratch / "run", quiet=True))
    try:
        graph.heatup(EnvironmentSteps(64))
        graph.train_and_act(EnvironmentSteps(128))
    finally:
        graph.close()


def run_python(block: Block, namespace: dict[str, Any], scratch: Path) -> None:
    name = file_name(block)
    if name is not None or is_preset(block.text):
        path = scratch / (name or f"{block.page.stem}_{block.line}.py".replace("-", "_"))
        path.write_text(block.text)
        if is_preset(block.text):
            run_preset_briefly(path, scratch)
    # As the reader runs it: not with this module's own `from __future__` imports.
    code = compile(block.text, str(block), "exec", dont_inherit=True)
    exec(code, namespace)


def run_yaml(block: Block, scratch: Path) -> None:
    document = yaml.safe_load(block.text)
    name = file_name(block)
    if name is not None:
        (scratch / name).write_text(block.text)
    if isinstance(document, dict) and "preset" in document:
        path = scratch / (name or f"{block.page.stem}_{block.line}.yaml")
        path.write_text(block.text)
        # As its reader would run it: allowing the preset files the page wrote beside it.
        load_preset(str(path), AllowedImports(tuple(str(p) for p in scratch.glob("*.py"))))
    elif isinstance(document, dict) and isinstance(document.get("parameters"), dict):
        values = document["parameters"].values()
        if all(isinstance(v, dict) for v in values):  # a search space for coach tune
            from coach.studies.search_space import parse_space

            parse_space(document, str(block))


def shell_environment() -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", "")])}


def run_console(block: Block, scratch: Path) -> None:
    for command, shown in transcript(block):
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", command],
            cwd=scratch,
            env=shell_environment(),
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert done.returncode == 0, (
            f"{block}: `{command}` exited {done.returncode}\n{done.stdout[-2000:]}"
            f"\n{done.stderr[-4000:]}"
        )
        printed = [line.strip() for line in (done.stdout + done.stderr).splitlines()]
        for line in shown:
            assert printed_as_shown(line, printed), (
                f"{block}: `{command}` printed no line like\n  {line}\nit printed:\n"
                + "\n".join(printed[-40:])
            )


def printed_as_shown(shown: str, printed: list[str]) -> bool:
    """Whether a line shown under a command is one it printed (`expected_line`); a line
    of names apart by spaces may also be ``ls`` in columns, the names printed one a line."""
    if shown.strip() in ("", "..."):
        return True
    pattern = expected_line(shown)
    if any(pattern.fullmatch(line) for line in printed):
        return True
    words = shown.split()
    return len(words) > 1 and all(w in printed for w in words)


def _make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text()
    return set(re.findall(r"^([A-Za-z][\w-]*):", text, flags=re.MULTILINE))


def parse_coach(arguments: list[str], scratch: Path, block: Block) -> None:
    """Parse a ``coach`` command line with the command itself (nothing runs), and load the
    preset it names."""
    try:
        context = coach_command.make_context("coach", list(arguments), resilient_parsing=True)
        with warnings.catch_warnings():  # click 8.2 moves the subcommand into args in 9.0
            warnings.simplefilter("ignore", DeprecationWarning)
            rest = [*context.protected_args, *context.args]
        if rest and rest[0] in coach_command.commands:
            sub = coach_command.commands[rest[0]]
            sub.make_context(rest[0], rest[1:], parent=context, resilient_parsing=True)
        elif rest:
            raise AssertionError(f"{block}: unexpected arguments {rest} in coach {arguments}")
    except click.ClickException as error:
        raise AssertionError(f"{block}: coach {shlex.join(arguments)}: {error}") from error
    for flag in ("-p", "--preset"):
        if flag in arguments:
            spec = arguments[arguments.index(flag) + 1]
            # A path is the page's own file, or one of the repository (commands are typed
            # from its root); anything else names a preset.
            local = [p for p in (scratch / spec, ROOT / spec) if p.exists()]
            load_preset(str(local[0]) if local else spec)


def check_bash(block: Block, scratch: Path) -> None:
    targets = _make_targets()
    for command in commands(block):
        # A placeholder such as <timestamp> stands for one word of the reader's.
        typed = PLACEHOLDER.sub("WORD", command)
        syntax = subprocess.run(["bash", "-n", "-c", typed], capture_output=True, text=True)
        assert syntax.returncode == 0, f"{block}: `{command}` is not valid bash: {syntax.stderr}"
        for part in re.split(r"\s*(?:&&|;|\|)\s*", command):
            words = shlex.split(part, comments=True)
            if not words:
                continue
            if words[0] == "coach":
                parse_coach(words[1:], scratch, block)
            elif words[0] == "make":
                unknown = [w for w in words[1:] if "=" not in w and w not in targets]
                assert not unknown, f"{block}: no make target {unknown}"


def run_page(page_blocks: list[Block], scratch: Path) -> None:
    """Every block of one page, in order, in ``scratch``."""
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    cwd = Path.cwd()
    os.chdir(scratch)
    try:
        for block in page_blocks:
            if block.language == "python":
                run_python(block, namespace, scratch)
            elif block.language in ("yaml", "yml"):
                run_yaml(block, scratch)
            elif block.language == "console":
                run_console(block, scratch)
            elif block.language in ("bash", "sh", "shell"):
                check_bash(block, scratch)
    finally:
        os.chdir(cwd)
