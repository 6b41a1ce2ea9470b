"""A page per agent: what it is, its parameters, its presets and their benchmark figures."""

from __future__ import annotations

import dataclasses
import importlib
import inspect

import algorithm_matrix
from benchmark_pages import anchor, seed_table
from catalogue import Catalogue, PresetEntry, breakable, promise, table
from network_tables import networks_table
from parameter_tables import class_summary, field_doc, parameter_entry, parameters_table

import coach
from coach.filters import InputFilter, OutputFilter
from coach.networks import NetworkParameters


def short_name(params: type) -> str:
    """``DQNAgentParameters`` -> ``DQN``: the agent's name, and its page's."""
    return params.__name__.removesuffix("AgentParameters")


def import_line(params: type) -> str:
    if params.__name__ in coach.__all__:
        return f"from coach import {params.__name__}"
    return f"from {params.__module__} import {params.__name__}"


def _module_doc(params: type) -> tuple[str, str]:
    """The agent module's docstring: its first paragraph (the paper) and the rest."""
    doc = inspect.getdoc(importlib.import_module(params.__module__)) or ""
    first, _, rest = doc.partition("\n\n")
    return " ".join(first.split()), rest.strip()


def _component_sections(params: type) -> list[str]:
    """A table for each component the agent's parameters hold by default (its algorithm,
    exploration and memory), in the agent's field order."""
    instance = params()
    sections = []
    for f in dataclasses.fields(params):
        value = getattr(instance, f.name)
        if not dataclasses.is_dataclass(value) or isinstance(value, type):
            continue
        if not dataclasses.fields(value) or isinstance(value, InputFilter | OutputFilter):
            continue  # the filters have a page of their own
        kind = type(value)
        sections.append(
            f"### `{f.name}`: `{kind.__name__}`\n\n{class_summary(kind)}\n\n"
            f"Set in a preset as `agent.{f.name}.<parameter>`, or on the command line as "
            f"`-cp agent.{f.name}.<parameter>=...`.\n\n{parameters_table(kind)}"
        )
    return sections


def _agent_field(params: type, defaults: object, name: str) -> str:
    """One field of the agent's parameters as an entry; its networks by name, whose
    defaults the networks section shows."""
    value = getattr(defaults, name)
    doc = field_doc(params, name)
    if (
        isinstance(value, dict)
        and value
        and all(isinstance(v, NetworkParameters) for v in value.values())
    ):
        names = ", ".join(f"`{n}`" for n in value)
        return f"`{name}` · default {names}: see [Networks](#networks) below\n: {doc}\n"
    return parameter_entry(name, None, value, doc)


def _networks_section(defaults: object) -> str:
    networks = getattr(defaults, "network_wrappers", {})
    return (
        "### Networks\n\n"
        "The networks the agent builds by default, a column each (layer sizes are the "
        "hidden layers' widths; a head's kind is its class, `QHeadParameters` for `Q`). Set "
        'one in a preset as `agent.network_wrappers["main"].learning_rate = ...`, or '
        "on the command line as `-cp agent.network_wrappers.main.learning_rate=...`; "
        "[Networks](../networks.md) says what every field does.\n\n" + networks_table(networks)
    )


def _presets_section(presets: list[PresetEntry]) -> str:
    if not presets:
        return "No shipped preset uses this agent yet.\n"
    rows = [
        [
            f"[{breakable(p.name)}](../reference/presets.md#{anchor(p.name)})",
            breakable(p.environment),
            promise(p.validation),
            ", ".join(map(str, p.validation.seeds)) if p.validation else "",
        ]
        for p in presets
    ]
    return table(["preset", "environment", "promise", "validated on seeds"], rows)


def _benchmarks_section(presets: list[PresetEntry], catalogue: Catalogue) -> str:
    parts = []
    for p in presets:
        result = catalogue.results.get(p.name)
        if result is None:
            continue
        parts.append(
            f"### {p.name}\n\n![{p.name}: evaluation {result['metric'].replace('_', ' ')} over "
            f"{len(result['seeds'])} seeds](../benchmarks/{result['figure']})\n\n"
            f"{seed_table(result, p.validation)}\n"
            f"Reproduce: `{result['command']}`. Every preset's benchmark: "
            f"[Benchmarks](../benchmarks/index.md#{anchor(p.name)}).\n"
        )
    if not parts:
        return "None of this agent's presets has been benchmarked yet.\n"
    return "\n".join(parts)


def agent_page(params: type, catalogue: Catalogue, row: algorithm_matrix.Row) -> str:
    name = short_name(params)
    paper, about = _module_doc(params)
    presets = catalogue.presets_of(params)
    defaults = params()
    agent_fields = "\n".join(
        _agent_field(params, defaults, f.name) for f in dataclasses.fields(params)
    )
    return "\n".join(
        [
            f"# {name}\n",
            f"*{paper}*\n",
            f"{about}\n" if about else "",
            "```python",
            import_line(params),
            "```\n",
            algorithm_matrix.works_with(row),
            "## Parameters\n",
            f"{class_summary(params)} Its components, as a preset finds them on "
            f"`{params.__name__}()`:\n",
            agent_fields,
            *_component_sections(params),
            _networks_section(defaults),
            "Observations, rewards and actions pass through the agent's `input_filter` and "
            "`output_filter`: see [Filters](../filters.md).\n",
            "## Presets\n",
            _presets_section(presets),
            "## Benchmarks\n",
            _benchmarks_section(presets, catalogue),
        ]
    )


def index_page(catalogue: Catalogue, rows: list[algorithm_matrix.Row]) -> str:
    papers = []
    for params in catalogue.agents:
        paper, _ = _module_doc(params)
        presets = catalogue.presets_of(params)
        papers.append(
            [
                f"[{breakable(short_name(params))}]({short_name(params)}.md)",
                paper,
                ", ".join(breakable(p.name) for p in presets) or "-",
            ]
        )
    toctree = "\n".join(short_name(p) for p in catalogue.agents)
    return (
        "# Agents\n\n"
        "Every agent Coach ships, each with its paper, its parameters (from the parameter "
        "classes' own docstrings), the presets that use it and their benchmark figures. An "
        "agent's name is its parameter class's without `AgentParameters` "
        "(`DQNAgentParameters` builds DQN).\n\n"
        "## Algorithms matrix\n\n"
        + algorithm_matrix.matrix(catalogue, rows)
        + "\n## Every agent\n\n"
        + table(["agent", "what it is", "presets"], papers)
        + f"\n```{{toctree}}\n:hidden:\n\n{toctree}\n```\n"
    )


def pages(catalogue: Catalogue) -> dict[str, str]:
    rows = algorithm_matrix.rows(catalogue)
    out = {"agents/index.md": index_page(catalogue, rows)}
    for params, row in zip(catalogue.agents, rows, strict=True):
        out[f"agents/{short_name(params)}.md"] = agent_page(params, catalogue, row)
    return out
