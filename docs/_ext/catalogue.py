"""What the generated pages describe, gathered once per build: every agent, every preset and
the committed benchmark results."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pkgutil
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import coach.agents
from coach.agents.parameters import AgentParameters
from coach.presets import PresetValidation, describe, list_presets, load_preset, presets_dir


@dataclass(frozen=True)
class PresetEntry:
    """One shipped preset, as the pages show it."""

    name: str
    summary: str
    """The first sentence of the preset's docstring."""
    environment: str
    agents: tuple[type, ...]
    """Its agents' parameter classes."""
    graph: str
    """Its graph manager's class."""
    validation: PresetValidation | None
    agent_parameters: tuple[AgentParameters, ...] = ()
    """Its agents' parameters, as the preset sets them."""
    graph_type: type = object
    """Its graph manager's class itself."""


@dataclass(frozen=True)
class Catalogue:
    agents: tuple[type, ...]
    """Every agent's parameter class that builds an agent, in module order."""
    presets: tuple[PresetEntry, ...]
    results: dict[str, Any]
    """``benchmarks/results.json``: by preset, its multi-seed benchmark."""

    @classmethod
    def load(cls, benchmarks: Path) -> Catalogue:
        results_file = benchmarks / "results.json"
        results = json.loads(results_file.read_text()) if results_file.is_file() else {}
        return cls(agent_classes(), tuple(preset_entries()), results)

    def presets_of(self, agent: type) -> list[PresetEntry]:
        """The presets whose graph holds an agent of exactly this parameter class."""
        return [p for p in self.presets if agent in p.agents]


def builds_an_agent(params: type) -> bool:
    """Whether a parameter class names the agent it builds (a family's base class does not)."""
    try:
        params().agent_class()
    except NotImplementedError:
        return False
    return True


def agent_classes() -> tuple[type, ...]:
    found: dict[type, None] = {}
    for module_info in pkgutil.iter_modules(coach.agents.__path__, "coach.agents."):
        module = importlib.import_module(module_info.name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(value, AgentParameters)
                and value.__module__ == module.__name__
                and builds_an_agent(value)
            ):
                found[value] = None
    return tuple(found)


def docstring_summary(path: Path) -> str:
    """The first sentence (up to the first blank line) of a Python file's docstring."""
    if path.suffix != ".py":
        return ""
    text = ast.get_docstring(ast.parse(path.read_text())) or ""
    return " ".join(text.split("\n\n")[0].split())


def _agent_parameters(roots: dict[str, Any]) -> tuple[AgentParameters, ...]:
    agents = [roots["agent"]] if roots.get("agent") is not None else roots.get("agents") or []
    if isinstance(agents, dict):
        agents = list(agents.values())
    return tuple(agents)


def _agents(roots: dict[str, Any]) -> tuple[type, ...]:
    return tuple(dict.fromkeys(type(a) for a in _agent_parameters(roots)))


def preset_entries() -> list[PresetEntry]:
    entries = []
    files = {p.stem: p for p in presets_dir().iterdir() if not p.name.startswith("_")}
    for name in list_presets():
        preset = load_preset(name)
        environment, _ = describe(preset)
        graph = preset.graph_manager
        entries.append(
            PresetEntry(
                name=name,
                summary=docstring_summary(files[name]) if name in files else "",
                environment=environment,
                agents=_agents(graph.parameters()),
                graph=type(graph).__name__,
                validation=preset.validation,
                agent_parameters=_agent_parameters(graph.parameters()),
                graph_type=type(graph),
            )
        )
    return entries


def promise(validation: PresetValidation | None) -> str:
    """A validation's promise for a table: the threshold and its budget."""
    if validation is None:
        return ""
    return f"{validation.describe()} within {validation.describe_budget()}"


_BREAK = re.compile(r"(?<=[_:/])(?=\w)|(?<=\.)(?=[A-Za-z])|(?<=[a-z])(?=[A-Z])")
"""Where a long name may break: after ``_``, ``:``, ``/`` or ``.`` and between the words of
a CamelCase name."""


_CODE = re.compile(r"(`+).+?\1")
"""A Markdown code span, of one backtick or more (a docstring's ``double`` ones too)."""


def breakable(text: str) -> str:
    """``text`` with a line-break opportunity (``<wbr>``, which copies as nothing) wherever a
    long name in it may break, outside its code spans: a table's column is then as wide as
    a name's longest part, not the whole name (``ExplorationChain_Bootstrapped_DQN``), so
    that tables fit the page."""
    out, position = [], 0
    for span in _CODE.finditer(text):
        out += [_BREAK.sub("<wbr>", text[position : span.start()]), span.group()]
        position = span.end()
    out.append(_BREAK.sub("<wbr>", text[position:]))
    return "".join(out)


def cell(text: str) -> str:
    """Text made safe for a Markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def table(headers: list[str], rows: list[list[str]]) -> str:
    """A Markdown (GFM) table."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"
