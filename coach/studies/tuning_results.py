"""What a ``coach tune`` study says: a line for each trial that ends, and at the end (or when
it is stopped) the summary, the best trial as a YAML preset, the figures and a table.

The objective is the mean of a trial's periodic evaluations (each its mean episode reward,
or its graph's own score), the area under its learning curve over the run (over its runs,
with several seeds: the mean of their areas): a trial that
reaches a high reward early and stays there scores best, one that gets there late or falls
off again scores less. That is what "reaches the threshold reliably within the budget"
asks, better than the last evaluation alone (RL Zoo's choice), which a lucky or an unlucky
final evaluation decides. With several seeds a trial's values must work on each of them, not
on the one seed that happened to suit them.

``best.yaml`` is a YAML preset: the base preset, the study's own ``-cp`` overrides, the best
trial's values and the (first) seed it ran with, so ``coach -p best.yaml`` repeats the best
trial's (first) run and ``coach -p best.yaml --seed N`` runs it on another seed.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from coach.errors import CoachError
from coach.parameters import parse_override, parse_value
from coach.studies.search_space import Dimension, SearchSpace
from coach.studies.trials import COMPLETE, FAILED, INTERRUPTED, PRUNED, TrialOutcome

if TYPE_CHECKING:
    from optuna import Study
    from optuna.trial import FrozenTrial

OBJECTIVE = "mean evaluation"
"""What a trial scores: the mean of its evaluations, over its run (or runs)."""
INTERRUPTED_ATTR = "interrupted"
"""The study's user attribute that lists the numbers of the interrupted trials."""
RERUNS_ATTR = "reruns"
"""A trial's user attribute: the interrupted trial whose parameters it runs again."""
BEST = "best.yaml"


def interrupted(study: Study) -> set[int]:
    """The numbers of the study's interrupted trials."""
    return set(study.user_attrs.get(INTERRUPTED_ATTR, []))


def count_states(trials: Iterable[FrozenTrial], stopped: set[int]) -> dict[str, int]:
    """How many trials ended each way (``stopped``: the interrupted ones' numbers)."""
    from optuna.trial import TrialState

    counts = dict.fromkeys((COMPLETE, PRUNED, FAILED, INTERRUPTED), 0)
    for trial in trials:
        if trial.state == TrialState.COMPLETE:
            counts[COMPLETE] += 1
        elif trial.state == TrialState.PRUNED:
            counts[PRUNED] += 1
        elif trial.state == TrialState.FAIL:
            counts[INTERRUPTED if trial.number in stopped else FAILED] += 1
    return counts


def short_names(paths: list[str]) -> dict[str, str]:
    """Each path's shortest dotted tail that no other path ends with (``learning_rate``)."""
    names = {}
    for path in paths:
        parts = path.split(".")
        tails = [".".join(parts[-n:]) for n in range(1, len(parts) + 1)]
        names[path] = next(
            tail
            for tail in tails
            if not any(other != path and f".{other}".endswith(f".{tail}") for other in paths)
        )
    return names


def _shown(dimension: Dimension, value: Any) -> str:
    if dimension.kind == "float" and isinstance(value, float):
        return f"{value:.4g}"
    return dimension.value_text(value)


def describe(space: SearchSpace, params: dict[str, Any]) -> str:
    """A trial's values, by their short names: ``learning_rate=0.0012 batch_size=64``."""
    names = short_names([d.path for d in space.dimensions])
    return " ".join(
        f"{names[d.path]}={_shown(d, params[d.path])}" for d in space.dimensions if d.path in params
    )


def trial_line(outcome: TrialOutcome, values: str, reruns: int | None = None) -> str:
    """The console's line for a trial that ended."""
    again = f" (trial {reruns}'s values again)" if reruns is not None else ""
    head = f"trial {outcome.number}{again}:"
    if outcome.state == COMPLETE:
        assert outcome.value is not None
        return f"{head} {outcome.value:.2f}  {values}"
    of = f" of seed {outcome.seed}" if outcome.seed is not None else ""
    if outcome.state == PRUNED:
        last = f" ({outcome.value:.2f})" if outcome.value is not None else ""
        return f"{head} pruned at {outcome.env_steps} env steps{of}{last}  {values}"
    if outcome.state == FAILED:
        return f"{head} failed: {outcome.message}  {values}"
    at = f" at {outcome.env_steps} env steps{of}" if outcome.env_steps else ""
    return f"{head} interrupted{at}; its values run again on --resume  {values}"


def _literal(text: str) -> Any:
    """An override's value as YAML writes it best: a number, true/false or null as itself,
    anything else (a step unit, a schedule, a word) as the text the override parser reads."""
    try:
        value = parse_value(text)
    except CoachError:
        return text
    return value if value is None or isinstance(value, bool | int | float) else text


def write_best(
    study: Study,
    preset: str,
    overrides: list[str],
    space: SearchSpace,
    path: Path,
    seeds: list[int],
) -> FrozenTrial | None:
    """Write the best complete trial as a YAML preset at ``path``; None if no trial is
    complete yet."""
    from optuna.trial import TrialState

    if not study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        return None
    best = study.best_trial
    parameters: dict[str, Any] = {}
    for text in overrides:
        key, value = parse_override(text)
        parameters[key] = _literal(value)
    for dimension in space.dimensions:
        value = best.params[dimension.path]
        parameters[dimension.path] = (
            dimension.value_text(value) if dimension.unit is not None else value
        )
    on = f"seed{'s' * (len(seeds) > 1)} {', '.join(map(str, seeds))}"
    header = (
        f"# The best trial ({best.number}) of the coach tune study in {path.parent}: "
        f"{best.value:.2f}, its {OBJECTIVE} (on {on}).\n"
        f"# Run it with: coach -p {path}   (--seed N for another seed)\n"
    )
    document = {"preset": preset, "seed": seeds[0], "parameters": parameters}
    path.write_text(header + yaml.safe_dump(document, sort_keys=False, width=100))
    return best


def write_figures(study: Study, folder: Path) -> tuple[list[Path], list[str]]:
    """Optuna's optimization history, parameter importances (two complete trials at least)
    and intermediate values, each as PNG and SVG; returns the files and notes on the
    figures left out."""
    import matplotlib

    matplotlib.use("Agg")  # Optuna draws with pyplot; no display is needed
    import matplotlib.pyplot as plt
    from optuna.trial import TrialState
    from optuna.visualization import matplotlib as plots

    from coach.studies.figures import save

    trials = study.get_trials(deepcopy=False)
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    drawings: list[tuple[str, Any]] = []
    notes = []
    if complete:
        drawings.append(("optimization_history", plots.plot_optimization_history))
    if len(complete) >= 2:
        drawings.append(("param_importances", plots.plot_param_importances))
    else:
        notes.append("no parameter importances: they need two complete trials")
    if any(t.intermediate_values for t in trials):
        drawings.append(("intermediate_values", plots.plot_intermediate_values))
    written: list[Path] = []
    for name, draw in drawings:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Optuna calls its matplotlib figures experimental
            try:
                axes = draw(study)
            except Exception as error:  # a figure is not worth failing the study for
                notes.append(f"no {name.replace('_', ' ')}: {error}")
                continue
        axes.figure.set_size_inches(10, 5)  # room for the parameters' paths
        axes.figure.tight_layout()
        written += save(axes.figure, folder / name)
        plt.close(axes.figure)
    return written, notes


def report(
    study: Study,
    preset: str,
    overrides: list[str],
    space: SearchSpace,
    folder: Path,
    seeds: list[int],
) -> list[str]:
    """Write best.yaml, the figures and trials.csv; return the summary's lines."""
    trials = study.get_trials(deepcopy=False)
    counts = count_states(trials, interrupted(study))
    finished = counts[COMPLETE] + counts[PRUNED] + counts[FAILED]
    again = counts[INTERRUPTED]
    rerun = f"; {again} interrupted, their values run again" if again else ""
    lines = [
        f"{finished} trials: {counts[COMPLETE]} complete, {counts[PRUNED]} pruned, "
        f"{counts[FAILED]} failed{rerun}"
    ]
    best = write_best(study, preset, overrides, space, folder / BEST, seeds)
    if best is None:
        lines.append("no trial has completed: no best.yaml")
    else:
        assert best.value is not None
        lines.append(
            f"best: trial {best.number}, {best.value:.2f} ({OBJECTIVE}): "
            f"{describe(space, best.params)}"
        )
        lines.append(f"best preset: {folder / BEST} (run it with: coach -p {folder / BEST})")
    written, notes = write_figures(study, folder)
    figures = [str(p) for p in written if p.suffix == ".png"]
    if figures:
        lines.append(f"figures (PNG and SVG): {', '.join(figures)}")
    lines += notes
    if trials:
        study.trials_dataframe().to_csv(folder / "trials.csv", index=False)
    return lines
