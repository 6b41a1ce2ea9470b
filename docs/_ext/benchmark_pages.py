"""The benchmark pages, from what ``make benchmarks-docs`` committed: ``results.json`` with
its figures (`benchmarks.learning_curves`) and the throughput tables of ``make bench``
(``throughput/*.txt``, `benchmarks.tables`); and the learning comparison against
Stable-Baselines3 that the comparison page includes, from ``peer_learning.json``
(``python -m benchmarks.peers --learning``)."""

from __future__ import annotations

import ast
import math
import statistics
from pathlib import Path
from typing import Any

from catalogue import Catalogue, breakable, promise, table

from coach.presets import PresetValidation


def anchor(heading: str) -> str:
    """The anchor MyST gives a heading made of a preset's name."""
    return heading.lower()


def _figure(value: float | None, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:,.{digits}f}"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f} s"


def _reached(seed: dict[str, Any]) -> str:
    """Where a seed first reached the threshold: its env steps and the wall time to them."""
    if seed["reached_at"] is None:
        return "never"
    return f"{seed['reached_at']:,} env steps, {_seconds(seed['seconds'])}"


FINAL_MISSES = "the final agent on 20 fresh episodes does not keep the promise"
"""A recorded seed's verdict where its final agent misses (golden's words)."""


def final_holds(seed: dict[str, Any], validation: PresetValidation | None) -> bool:
    """Whether a recorded seed's final agent keeps an absolute promise (a threshold or a
    ceiling on its reward or success rate). A relative promise's floor is the seed's own,
    measured by its golden run: its recorded verdict stands."""
    final = seed.get("final")
    if validation is None or validation.gap_closed is not None or final is None:
        return True
    rewarded = validation.min_reward is not None or validation.max_reward is not None
    mean, rate = (final * validation.per_agent, math.nan) if rewarded else (math.nan, final)
    return validation.kept(mean, rate)


def passed(seed: dict[str, Any], validation: PresetValidation | None) -> bool:
    """A recorded seed's verdict under golden's rule: the record passed, and its final agent
    keeps the promise (records made before golden judged the final agent passed without
    it)."""
    return bool(seed["passed"]) and final_holds(seed, validation)


def verdict(seed: dict[str, Any], validation: PresetValidation | None) -> str:
    """The table's validation cell: ``pass``, or ``fail:`` and why."""
    if not seed["passed"]:
        return f"fail: {seed['why']}"
    return "pass" if final_holds(seed, validation) else f"fail: {FINAL_MISSES}"


def seed_table(result: dict[str, Any], validation: PresetValidation | None) -> str:
    """The per-seed figures of a preset's benchmark, with each seed's baselines where golden
    measured the preset against scripted players, and a line on a relative promise."""
    measured = any(s.get("baselines") for s in result["seeds"])
    relative = validation is not None and validation.gap_closed is not None
    per_agent = validation.per_agent if validation is not None else 1
    unit = " (per agent)" if per_agent > 1 else ""
    rows = [
        [
            str(s["seed"]),
            *([s["baselines"] or "-"] if measured else []),
            _reached(s),
            _figure(s["best"], 2),
            _figure(s["best_checkpoint"], 2),
            _figure(s["final"], 2),
            _seconds(s.get("total_seconds")),
            verdict(s, validation),
        ]
        for s in result["seeds"]
    ]
    text = table(
        [
            "seed",
            *(["baselines"] if measured else []),
            "threshold reached at",
            f"best evaluation{unit}",
            f"best.pt, 20 episodes{unit}",
            f"final agent, 20 episodes{unit}",
            "run's wall time",
            "validation",
        ],
        rows,
    )
    notes = []
    if relative:
        notes.append(
            "The promise is relative: on each seed, the golden run first scores a uniformly "
            "random policy and a scripted one on that seed, and the floor is the "
            "share of the gap between them that the preset promises to close. The figure's "
            "dashed line is the mean of the seeds' floors."
        )
    if per_agent > 1:
        notes.append(
            f"The figure shows the graph's evaluation reward, the sum over the {per_agent} "
            f"agents it scores; the table divides it by {per_agent}, as the promise does."
        )
    return text + ("\n" + " ".join(notes) + "\n" if notes else "")


def _mean(values: list[float]) -> str:
    return f"{statistics.fmean(values):,.0f}" if values else "-"


def results_page(catalogue: Catalogue) -> str:
    """Every benchmarked preset: a summary table, then its figure and figures per seed."""
    entries = {p.name: p for p in catalogue.presets}
    names = [n for n in catalogue.results if n in entries]
    summary = []
    sections = []
    for name in names:
        result = catalogue.results[name]
        seeds = result["seeds"]
        reached = [s for s in seeds if s["reached_at"] is not None]
        summary.append(
            [
                f"[{breakable(name)}](#{anchor(name)})",
                promise(entries[name].validation),
                f"{sum(passed(s, entries[name].validation) for s in seeds)}/{len(seeds)}",
                _mean([s["reached_at"] for s in reached]),
                _mean([s["seconds"] for s in reached]) + (" s" if reached else ""),
            ]
        )
        agents = ", ".join(
            f"[{a.__name__.removesuffix('AgentParameters')}]"
            f"(../agents/{a.__name__.removesuffix('AgentParameters')}.md)"
            for a in entries[name].agents
            if a in catalogue.agents
        )
        sections.append(
            f"### {name}\n\n{entries[name].summary}\n\n"
            f"Agent: {agents or '-'}. Environment: {entries[name].environment}. "
            f"Promise: {promise(entries[name].validation)}.\n\n"
            f"![{name}]({result['figure']})\n\n{seed_table(result, entries[name].validation)}\n"
            f"Recorded at commit `{result['commit']}` on {result['date']}, on a 2-core "
            f"machine that trained other cases at the same time (wall times include that "
            f"sharing: compare env steps across presets, not seconds). Reproduce:\n\n"
            f"```bash\n{result['command']}\n```\n"
        )
    missing = [
        f"{p.name} ({promise(p.validation)})"
        for p in catalogue.presets
        if p.validation and p.name not in names
    ]
    return "\n".join(
        [
            "# Benchmarks\n",
            "Each shipped preset with a validation, trained as `make golden` trains it "
            "(within its validation's budgets) on several seeds, drawn by `coach plot`: the "
            "mean evaluation curve, its 95% bootstrap band and the validation's threshold "
            "(dashed). The tables give, per seed, the env steps and the wall time at the first "
            "evaluation that reached the threshold, the best evaluation, the kept `best.pt` "
            "and the final agent, each on 20 fresh episodes. `make benchmarks-docs` writes "
            "the figures and `results.json` this page is built from "
            "([how](#how-these-figures-are-made)).\n",
            "## Summary\n",
            "The means are over the seeds that reached the threshold.\n",
            table(
                [
                    "preset",
                    "promise",
                    "seeds passing",
                    "mean env steps to it",
                    "mean wall time to it",
                ],
                summary,
            ),
            "## Presets\n",
            *sections,
            "## How these figures are made\n",
            "```bash\nmake benchmarks-docs    # every preset with a validation, seeds 0, 1, 2\n"
            "python -m benchmarks.learning_curves CartPole_DQN CartPole_PPO --seeds 0 1 2 "
            "--jobs 2\n```\n",
            "Runs are kept in `experiments/benchmarks/PRESET/seedN` (`--runs`): an "
            "interrupted case resumes from its checkpoint. Each finished case is also "
            "recorded, a few kilobytes, in `docs/benchmarks/runs/PRESET/seedN` (its "
            "parameters, its evaluations, its verdict), committed with the figures: a "
            "recorded case is read back instead of trained, so a preset's seeds may finish "
            "on different machines, and `coach plot docs/benchmarks/runs/PRESET` draws a "
            "figure again without training. Throughput figures are on "
            "[their own page](throughput.md).\n",
            "Not benchmarked yet (each of these trains for hours per seed on a CPU; a "
            "recorded seed waits in `docs/benchmarks/runs` for the others): "
            + ("; ".join(missing) if missing else "none")
            + ".\n",
        ]
    )


def _modules(benchmarks: Path) -> list[str]:
    """``benchmarks.tables.MODULES``, read from its source (the benchmarks are not imported
    to build the site)."""
    for node in ast.parse((benchmarks / "tables.py").read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "MODULES" for t in node.targets
        ):
            return list(ast.literal_eval(node.value))
    raise ValueError(f"{benchmarks / 'tables.py'} has no MODULES")


def _summary(module: Path) -> str:
    """The first paragraph of a benchmark module's docstring, on one line."""
    docstring = ast.get_docstring(ast.parse(module.read_text())) or ""
    return " ".join(docstring.split("\n\n")[0].split())


def throughput_page(folder: Path, benchmarks: Path) -> str:
    """The tables ``make bench`` printed, as committed by ``make benchmarks-docs``, in the
    order ``make bench`` runs them, each under what its module measures."""
    parts = [
        "# Throughput\n",
        "What `make bench` printed on the 2-core machine the benchmarks ran on, one "
        "benchmark module after another. Each table ends with the command that reproduces "
        "it.\n",
    ]
    order = _modules(benchmarks)
    tables = sorted(
        (folder / "throughput").glob("*.txt"),
        key=lambda p: (order.index(p.stem) if p.stem in order else len(order), p.stem),
    )
    for path in tables:
        parts.append(
            f"## {path.stem}\n\n{_summary(benchmarks / f'{path.stem}.py').rstrip('.')} "
            f"(`python -m benchmarks.{path.stem}`).\n\n```text\n{path.read_text().strip()}\n```\n"
        )
    missing = [m for m in order if not (folder / "throughput" / f"{m}.txt").is_file()]
    if missing:
        parts.append("Not measured yet: " + ", ".join(missing) + ".\n")
    return "\n".join(parts)


PEER_LEARNING = "peer_learning.md"
"""The comparison page's learning table, written beside the records it is made from and
included by ``comparison.md`` (not a page of its own: conf.py excludes it)."""


def peer_learning(folder: Path) -> str:
    """The learning comparison's table, made from ``peer_learning.json`` by the function
    that prints it (`benchmarks.peer_learning.learning_section`, which runs nothing: it
    imports no more of the benchmarks than that module); or that it is not recorded yet."""
    from benchmarks.peer_learning import RECORDS, learning_section

    return learning_section(folder / RECORDS.name)


def pages(catalogue: Catalogue, folder: Path) -> dict[str, str]:
    return {
        f"benchmarks/{PEER_LEARNING}": peer_learning(folder),
        "benchmarks/index.md": results_page(catalogue)
        + "\n```{toctree}\n:hidden:\n\nthroughput\n```\n",
        "benchmarks/throughput.md": throughput_page(folder, folder.parents[1] / "benchmarks"),
    }
