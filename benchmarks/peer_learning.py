"""The learning comparison of `benchmarks.peers` (``--learning``): the records of its cases
and the table made from them.

Each case is one (library, preset, seed) run. Its record, kept in a JSON file
(``docs/benchmarks/peer_learning.json`` by default) as soon as the case ends, is by preset:

    {"CartPole_DQN": {"algorithm": "DQN", "threshold": 475.0,
                      "cases": {"coach": {"0": CASE, ...}, "sb3": {"0": CASE, ...}}}}

where a CASE holds the final agent's mean reward on 20 fresh episodes (``final_agent``), the
run's last periodic evaluation (``last_evaluation``), the env steps and gradient steps it
trained, the seconds of its training and of its whole process (``train_seconds``,
``wall_seconds``: Python's start to exit, the final agent's evaluation included), the ``-cp``
overrides it took, the hash of what that side's run is built from (``spec``, `spec_hash`),
the commit it ran at (``git rev-parse --short HEAD``, with ``+`` when the tree had changes)
and the date.

`learning_table` makes the Markdown table from the records alone (it runs nothing): per
preset, the interquartile mean (IQM) of the final agents over the seeds with its 95%
stratified-bootstrap confidence interval (`coach.studies.statistics.aggregate`, which asks
rliable), and the fraction of seeds whose final agent holds the preset's threshold
(``validation.min_reward``, reached when the reward is at least it). A side whose seeds are
not all recorded, or were recorded with different parameters, is shown as incomplete.

Nothing of Coach is imported here but its statistics: the documentation's build imports
this module to show the table on the comparison page (``docs/_ext/benchmark_pages.py``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from coach.studies.statistics import Estimate, aggregate

SEEDS = tuple(range(10))
"""The seeds of the comparison, unless told others."""
RECORDS = Path("docs") / "benchmarks" / "peer_learning.json"
"""Where the records are kept, from the repository's root."""
SIDES = {"coach": "Coach", "sb3": "SB3"}
"""The two libraries: their key in the records, their name in the table."""
COMMAND = "python -m benchmarks.peers --learning"

Records = dict[str, dict[str, Any]]
"""The records file: by preset, its algorithm, threshold and cases (module docstring)."""


def spec_hash(spec: Any) -> str:
    """A short hash of a run's description (JSON-able): a case is run again when it
    changes."""
    text = json.dumps(spec, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def load_records(path: Path) -> Records:
    """The records in ``path``; none when it does not exist."""
    return json.loads(path.read_text()) if path.is_file() else {}


def recorded_case(records: Records, preset: str, side: str, seed: int) -> dict[str, Any] | None:
    """The record of one case, if there is one."""
    return records.get(preset, {}).get("cases", {}).get(side, {}).get(str(seed))


def record_case(
    path: Path,
    preset: str,
    algorithm: str,
    threshold: float,
    side: str,
    seed: int,
    case: dict[str, Any],
) -> None:
    """Write one finished case into the records at ``path`` (whole or not at all: the file is
    replaced by a complete new one)."""
    records = load_records(path)
    entry = records.setdefault(preset, {})
    entry["algorithm"], entry["threshold"] = algorithm, threshold
    sides = entry.setdefault("cases", {})
    cases = {**sides.get(side, {}), str(seed): case}
    sides[side] = dict(sorted(cases.items(), key=lambda item: int(item[0])))
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(dict(sorted(records.items())), indent=1) + "\n")
    partial.replace(path)


def seeds_text(seeds: Iterable[int]) -> str:
    """Seeds as ``--seeds`` takes them: ``0-9``, or ``0,3,7``."""
    ordered = sorted(seeds)
    if len(ordered) > 2 and ordered == list(range(ordered[0], ordered[-1] + 1)):
        return f"{ordered[0]}-{ordered[-1]}"
    return ",".join(map(str, ordered))


BOOTSTRAP_SEED = 0
"""Seeds the bootstrap of every interval: the same records give the same table."""


def iqm(rewards: Sequence[float]) -> Estimate:
    """The interquartile mean of ``rewards`` (one per seed) and its 95% stratified bootstrap
    confidence interval (rliable's, 2000 resamples, seeded with `BOOTSTRAP_SEED`)."""
    scores = np.asarray(rewards, dtype=np.float64).reshape(-1, 1)  # (runs, one task)
    estimates = aggregate({"final agents": scores}, seed=BOOTSTRAP_SEED)
    return estimates["final agents"]["IQM"]


def _complete(cases: dict[str, Any], seeds: Sequence[int]) -> list[dict[str, Any]] | str:
    """The cases of ``seeds``, or why they are incomplete."""
    found = [cases[str(s)] for s in seeds if str(s) in cases]
    if len(found) < len(seeds):
        return f"incomplete: {len(found)} of {len(seeds)} seeds"
    if len({case["spec"] for case in found}) > 1:
        return "incomplete: seeds recorded with different parameters"
    return found


def _figure(value: float) -> str:
    return f"{value:,.1f}"


def _row(name: str, entry: dict[str, Any], seeds: Sequence[int]) -> list[str]:
    threshold = float(entry["threshold"])
    sides = {side: _complete(entry.get("cases", {}).get(side, {}), seeds) for side in SIDES}
    if any(isinstance(found, str) for found in sides.values()):
        reasons = [
            found if isinstance(found, str) else f"{len(found)} of {len(seeds)} seeds"
            for found in sides.values()
        ]
        figures = [*reasons, *reasons]
    else:
        estimates, holding = [], []
        for found in sides.values():
            assert not isinstance(found, str)
            rewards = [float(case["final_agent"]) for case in found]
            e = iqm(rewards)
            estimates.append(f"{_figure(e.point)} [{_figure(e.low)}, {_figure(e.high)}]")
            holding.append(f"{sum(r >= threshold for r in rewards)}/{len(rewards)}")
        figures = [*estimates, *holding]
    return [name, entry["algorithm"], str(len(seeds)), f"≥ {threshold:g}", *figures]


def _markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = [header, ["---"] * len(header), *rows]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines) + "\n"


def commands(records: Records, seeds: Sequence[int]) -> list[str]:
    """The commands that reproduce the records' table: one per set of ``-cp`` overrides the
    presets were run with."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for name, entry in records.items():
        cases = _cases(entry, seeds)
        for overrides in dict.fromkeys(tuple(case.get("overrides", [])) for case in cases):
            groups.setdefault(overrides, []).append(name)
    return [
        f"{COMMAND} --presets {' '.join(names)} --seeds {seeds_text(seeds)}"
        + "".join(f" -cp '{o}'" for o in overrides)
        for overrides, names in groups.items()
    ]


def learning_table(records: Records, seeds: Sequence[int] = SEEDS) -> str:
    """The comparison's table from ``records`` (Markdown): per preset, each side's IQM of its
    final agents over ``seeds`` with its 95% confidence interval and the fraction of those
    seeds whose final agent holds the threshold; then when the cases were recorded and the
    command that reproduces them."""
    header = [
        "preset",
        "algorithm",
        "seeds",
        "threshold",
        *(f"{label} IQM [95% CI]" for label in SIDES.values()),
        *(f"{label} fraction holding" for label in SIDES.values()),
    ]
    rows = [_row(name, entry, seeds) for name, entry in records.items()]
    cases = [case for entry in records.values() for case in _cases(entry, seeds)]
    commits = ", ".join(f"`{c}`" for c in sorted({case["commit"] for case in cases}))
    dates = sorted({case["date"] for case in cases})
    notes = []
    if cases:
        when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
        notes.append(f"Recorded at commit {commits} on {when}.")
    overridden = [
        name
        for name, entry in records.items()
        if any(case.get("overrides") for case in _cases(entry, seeds))
    ]
    if overridden:
        notes.append(
            "Run with `-cp` overrides (not the presets as shipped): " + ", ".join(overridden) + "."
        )
    command = "\n".join(commands(records, seeds))
    return _markdown(header, rows) + "\n" + " ".join(notes) + f"\n\n```bash\n{command}\n```\n"


def _cases(entry: dict[str, Any], seeds: Sequence[int]) -> list[dict[str, Any]]:
    """The cases of a preset's entry on ``seeds``, both sides."""
    return [
        side[str(seed)]
        for side in entry.get("cases", {}).values()
        for seed in seeds
        if str(seed) in side
    ]


NOT_RECORDED = (
    "The learning comparison has not been recorded yet. It is recorded by:\n\n"
    f"```bash\n{COMMAND} --seeds {seeds_text(SEEDS)} --jobs 2\n```\n"
)
"""What the documentation says where there are no records."""


def learning_section(path: Path, seeds: Sequence[int] = SEEDS) -> str:
    """The documentation's text of the comparison: the table of the records at ``path``, or
    that there are none yet."""
    records = load_records(path)
    return learning_table(records, seeds) if records else NOT_RECORDED
