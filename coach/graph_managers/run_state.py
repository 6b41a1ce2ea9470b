"""What a checkpoint holds of a run, and how a run carries on from one.

A run's state is where its loop stands (`RunProgress`, the phase, the environments' step
and episode counters, the evaluations so far), its agents (networks, optimizers, acting
state and, on request, memories), the episodes in flight where the environment can save
them, and the logger's running figures. Restored, the run goes on exactly where it stopped.
`coach.checkpoints` writes and reads the files; `GraphManager.state_dict` and
`GraphManager.load_state_dict` are these functions applied to the graph.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Protocol

from coach.core.run_phase import RunPhase
from coach.environments.environment import Environment
from coach.errors import CoachError
from coach.graph_managers.evaluation import EvaluationResult
from coach.graph_managers.parameters import RunContext
from coach.level_manager import Level
from coach.logging.experiment_logger import ExperimentLogger
from coach.parameter_tree import flatten


@dataclass(slots=True)
class RunProgress:
    """Where a run stands: what its loop needs to carry on exactly after a restore."""

    evaluation_env_steps: int = 0
    """Env steps spent in evaluations (off the training clock)."""
    evaluation_episodes: int = 0
    """Episodes finished in evaluations."""
    frozen_env_steps: int = 0
    """The training clock while an evaluation runs."""
    seeded: bool = False
    """The environments had their seeded reset."""
    heatup_done: bool = False
    """Heatup has spent its budget."""
    improve_start: int | None = None
    """The training count at which `improve` began, in the improve budget's unit."""
    period_end: int | None = None
    """Where the current training period ends, in its own unit; ``None`` between periods."""


class Run(Protocol):
    """What `run_state` reads of a run and `restore_run` sets (a `GraphManager`)."""

    name: str
    context: RunContext
    phase: RunPhase
    progress: RunProgress
    environment: Environment | None
    evaluations: list[EvaluationResult]
    fresh_episodes: bool
    levels: list[Level]
    logger: ExperimentLogger | None

    def parameters(self) -> dict[str, Any]: ...


def run_state(run: Run, include_memory: bool = False) -> dict[str, Any]:
    """Everything ``run`` needs to carry on exactly; its memories only with
    ``include_memory``."""
    assert run.environment is not None
    return {
        "preset": run.name,
        "level": getattr(run.parameters().get("environment"), "level", None),
        "seed": run.context.seed,
        "device": run.context.device,
        "threads": run.context.num_threads,
        "parameters": trained_parameters(run.parameters()),
        "phase": run.phase.value,
        "progress": dataclasses.asdict(run.progress),
        "env_total_steps": run.environment.total_steps,
        "env_total_episodes": run.environment.total_episodes,
        "evaluations": [[e.env_steps, e.rewards, e.lengths, e.successes] for e in run.evaluations],
        "episodes_in_flight": not run.fresh_episodes,
        "environment": None if run.fresh_episodes else run.environment.state_dict(),
        "levels": None if run.fresh_episodes else [level.episode_state() for level in run.levels],
        "agents": [level.agents_state_dict(include_memory) for level in run.levels],
        "logger": run.logger.state_dict() if run.logger is not None else None,
    }


NOT_COMPARED = ("environment.render_mode",)
"""Parameters a resumed run may change without asking: how it shows its episodes (``-r``,
``-dm`` set it), not what it learns."""


def trained_parameters(parameters: dict[str, Any]) -> dict[str, Any]:
    """The parameters a checkpoint records as what the run trained with: every settable
    value (`coach.parameter_tree.flatten`), as ``params.yaml`` holds them."""
    settable, _ = flatten(parameters)
    return {path: _as_yaml(value) for path, value in settable.items() if path not in NOT_COMPARED}


def _as_yaml(value: Any) -> Any:
    """``value`` as ``params.yaml`` gives it back: tuples are lists."""
    if isinstance(value, list | tuple):
        return [_as_yaml(v) for v in value]
    if isinstance(value, dict):
        return {k: _as_yaml(v) for k, v in value.items()}
    return value


def parameter_changes(
    state: dict[str, Any], parameters: dict[str, Any]
) -> dict[str, tuple[Any, Any]]:
    """The parameters whose value differs from what the checkpoint ``state`` trained with,
    as ``{path: (trained, now)}`` (``None`` on the side that lacks the path); nothing for a
    checkpoint from before they were recorded."""
    trained = state.get("parameters")
    if trained is None:
        return {}
    now = trained_parameters(parameters)
    return {
        path: (trained.get(path), now.get(path))
        for path in sorted(set(trained) | set(now))
        if trained.get(path) != now.get(path)
    }


def unasked_changes(
    changes: dict[str, tuple[Any, Any]], asked: tuple[str, ...]
) -> dict[str, tuple[Any, Any]]:
    """Of ``changes``, those no path of ``asked`` (the overrides a resume was given) covers:
    the path itself, or a group of parameters it lies in."""
    return {
        path: change
        for path, change in changes.items()
        if not any(path == a or path.startswith(f"{a}.") for a in asked)
    }


def describe_changes(changes: dict[str, tuple[Any, Any]], most: int = 3) -> str:
    """``agent.algorithm.discount 0.99 -> 0.5, ...`` (the first ``most``, then how many more)."""
    shown = [f"{path} {before!r} -> {after!r}" for path, (before, after) in changes.items()]
    more = f" and {len(shown) - most} more" if len(shown) > most else ""
    return ", ".join(shown[:most]) + more


def with_memories(state: dict[str, Any], levels: list[Level]) -> dict[str, Any]:
    """``state``, taken without memories, with the agents' memories as they are now (a
    checkpoint taken during an evaluation: the memories have not changed since)."""
    agents = [
        level.with_memories(agents) for agents, level in zip(state["agents"], levels, strict=True)
    ]
    return {**state, "agents": agents}


def restore_run(run: Run, state: dict[str, Any], whole_run: bool = True) -> None:
    """Restore ``state`` into ``run``: the whole run, or (``whole_run=False``) only the
    agents.

    Raises:
        CoachError: when the checkpoint's agents do not fit the run's.
    """
    assert run.environment is not None
    where = state.get("path", "the checkpoint")
    if len(state["agents"]) != len(run.levels):
        raise CoachError(f"{where} has {len(state['agents'])} agents, this graph {len(run.levels)}")
    in_flight = whole_run and state["environment"] is not None
    if in_flight:  # the levels carry on their part of the episodes, if the state holds it
        saved = state.get("levels") or [None] * len(run.levels)
        in_flight = all(
            level.continue_episodes(s) for level, s in zip(run.levels, saved, strict=True)
        )
    for level, agent_state in zip(run.levels, state["agents"], strict=True):
        try:
            level.load_agents_state_dict(agent_state, episodes_in_flight=in_flight)
        except (RuntimeError, KeyError, ValueError) as error:
            first_line = str(error).strip().splitlines()[0]
            raise CoachError(f"{where} does not fit this preset's agents: {first_line}") from None
    if not whole_run:
        return
    if run.logger is not None:
        _log_changed_settings(run, state)
    run.phase = RunPhase(state["phase"])
    run.progress = RunProgress(**state["progress"])  # after the phase, which may touch it
    run.environment.total_steps = int(state["env_total_steps"])
    run.environment.total_episodes = int(state["env_total_episodes"])
    run.evaluations = [EvaluationResult(*e) for e in state["evaluations"]]
    run.fresh_episodes = not in_flight
    if in_flight:
        run.environment.load_state_dict(state["environment"])
    elif state["episodes_in_flight"] and run.logger is not None:
        why = (
            "this environment's episodes cannot be saved"
            if state["environment"] is None
            else "the checkpoint does not hold what the levels need of them"
        )
        run.logger.info(f"{why}: the episodes in flight restart")


def _log_changed_settings(run: Run, state: dict[str, Any]) -> None:
    """Say so where a run carries on with another device or other CPU threads than it had
    (a checkpoint from before they were kept has neither)."""
    assert run.logger is not None
    changed = [
        f"{what} {state[key]} to {now}"
        for key, what, now in (
            ("device", "device", run.context.device),
            ("threads", "torch threads", run.context.num_threads),
        )
        if state.get(key, now) != now
    ]
    if changed:
        run.logger.info(
            f"resumed from {' and '.join(changed)}: the numbers will differ from an "
            "uninterrupted run's"
        )
