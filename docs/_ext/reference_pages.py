"""The preset index (every shipped preset, a row each) and the API reference (every public
name of ``coach``, from its docstrings)."""

from __future__ import annotations

import inspect

from agent_pages import short_name
from benchmark_pages import anchor
from catalogue import Catalogue, breakable, promise, table

import coach

GROUPS = {
    "coach.agents": "Agents",
    "coach.graph_managers": "Graph managers and schedules",
    "coach.level_manager": "Graph managers and schedules",
    "coach.multi_agent": "Graph managers and schedules",
    "coach.core": "Core records and step units",
    "coach.environments": "Environments",
    "coach.exploration": "Exploration",
    "coach.memories": "Memories",
    "coach.networks": "Networks",
    "coach.filters": "Filters",
    "coach.schedules": "Parameter schedules",
    "coach.trained_agent": "Acting with a trained agent",
    "coach.presets": "Presets and errors",
    "coach.preset_validation": "Presets and errors",
    "coach.errors": "Presets and errors",
}
"""The API page's sections, by the module prefix of where a name is defined."""


def group_of(value: object) -> str:
    module = getattr(value, "__module__", "") or ""
    for prefix, group in GROUPS.items():
        if module == prefix or module.startswith(prefix + "."):
            return group
    return "Other"


def api_page() -> str:
    """The API reference: Markdown headings (so that guides link to a section), each name's
    autodoc in an ``eval-rst`` block (autodoc writes reStructuredText, which Markdown would
    misread)."""
    by_group: dict[str, list[str]] = {group: [] for group in dict.fromkeys(GROUPS.values())}
    for name in coach.__all__:
        value = getattr(coach, name)
        directive = "autoclass" if inspect.isclass(value) else "autofunction"
        by_group.setdefault(group_of(value), []).append(
            f"```{{eval-rst}}\n.. {directive}:: coach.{name}\n```\n"
        )
    parts = [
        "# API reference\n",
        "Every name `coach` exports (`from coach import ...`: what a preset writer needs), "
        "from its docstrings. A parameter class lists its fields with what each one means; "
        "the agent pages show the same fields with their defaults. Modules hold more than "
        "this page shows: each one's docstring says what it is for.\n",
    ]
    for group, entries in by_group.items():
        if entries:
            parts += [f"## {group}\n", *entries]
    return "\n".join([*parts, *extension_section()])


def extension_section() -> list[str]:
    """The page's last section: `coach.extension`, what one's own agent is written from,
    with the module's own account of its groups and its stability note. A name `coach`
    exports too is documented once, in its section above."""
    import coach.extension as extension

    above = [name for name in extension.__all__ if name in coach.__all__]
    parts = [
        "## Writing an agent: `coach.extension`\n",
        "```{eval-rst}\n.. automodule:: coach.extension\n   :no-members:\n```\n",
        "Documented above, among the names `coach` exports: "
        + ", ".join(f"`{name}`" for name in above)
        + ".\n",
    ]
    for name in extension.__all__:
        if name in above:
            continue
        value = getattr(extension, name)
        if inspect.ismodule(value):  # its checks, each under its own name
            checks = [
                f
                for f, v in vars(value).items()
                if inspect.isfunction(v) and v.__module__ == value.__name__ and f[0] != "_"
            ]
            targets = [(f"{value.__name__}.{f}", "autofunction") for f in checks]
        else:
            # By the name it is defined under: the anchor its source page links back to.
            directive = "autoclass" if inspect.isclass(value) else "autofunction"
            targets = [(f"{value.__module__}.{value.__qualname__}", directive)]
        for target, directive in targets:
            parts.append(f"```{{eval-rst}}\n.. {directive}:: {target}\n```\n")
    return parts


def presets_page(catalogue: Catalogue) -> str:
    rows = []
    for p in catalogue.presets:
        agents = ", ".join(
            f"[{breakable(short_name(a))}](../agents/{short_name(a)}.md)"
            if a in catalogue.agents
            else breakable(a.__name__)
            for a in p.agents
        )
        promised = "-"
        if p.validation is not None:
            seeds = ", ".join(map(str, p.validation.seeds))
            promised = f"{promise(p.validation)}, on seeds {seeds}"
        if p.name in catalogue.results:
            promised += f" ([figure](../benchmarks/index.md#{anchor(p.name)}))"
        rows.append(
            [
                # A target the agent pages link to.
                f"[{breakable(p.name)}]{{#{anchor(p.name)}}}",
                agents,
                breakable(p.environment),
                promised,
                breakable(p.summary),
            ]
        )
    return (
        "# Preset index\n\n"
        f"The {len(catalogue.presets)} presets Coach ships (`coach -l` lists them too). Run "
        "one with `coach -p NAME`; its promise is what `make golden` checks: the evaluation "
        "threshold and the budget to reach it in, on the seeds named, with the benchmark "
        "figure of those seeds where it has been measured.\n\n"
        + table(["preset", "agents", "environment", "promise", "what it is"], rows)
    )


def pages(catalogue: Catalogue) -> dict[str, str]:
    return {"reference/presets.md": presets_page(catalogue), "reference/api.md": api_page()}
