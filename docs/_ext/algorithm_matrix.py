"""The algorithms matrix: what each agent acts in and runs with, found out from the code.

Nothing in a row is typed by hand but the names an algorithm is searched for
(`ALSO_KNOWN_AS`). The rest is asked of the code itself:

- the action spaces: each agent is built, with its default parameters and with those of
  every shipped preset that uses it (each also with its categorical policy heads made
  Gaussian, the one change a policy agent needs for a Box), on a small observation and each
  kind of action space (`SPACES`); a space is the agent's when one of them builds (an agent
  refuses a space it cannot act in with a `CoachError` as it is built);
- what it learns from: a rollout memory (`RolloutParameters`) is on-policy, any other memory
  off-policy; an agent whose every shipped preset is a batch preset is offline;
- recurrent: the agent class's ``recurrent`` (it learns LSTM or GRU networks over sequences);
- rollout workers: the agent class's ``not_on_workers`` (why ``-n`` refuses it), and whether
  its presets' graphs run on workers at all (a hierarchy and batch RL do not);
- multi-agent and asynchronous workers: a shipped preset of that kind uses the agent;
- export: `coach.export.policy.ExportedPolicy` takes the built agent's policy (it refuses a
  recurrent network, a policy that says it cannot be, a filter without an exported form),
  and a preset of one agent alone in its environment uses it (a hierarchy and a multi-agent
  level cannot be exported).
"""

from __future__ import annotations

import contextlib
import copy
from dataclasses import dataclass
from typing import Any

import numpy as np
from catalogue import Catalogue, PresetEntry, breakable, table
from gymnasium import spaces

from coach.batch.graph_manager import BatchRLGraphManager
from coach.errors import CoachError
from coach.graph_managers.hrl import HRLGraphManager
from coach.memories.rollout import RolloutParameters
from coach.multi_agent import MultiAgentGraphManager
from coach.networks import CategoricalPolicyHeadParameters, GaussianPolicyHeadParameters
from coach.parallel.asynchronous import AsynchronousGraphManager

ALSO_KNOWN_AS: dict[str, str] = {
    "ACERAgentParameters": "ACER",
    "ActorCriticAgentParameters": "A2C, A3C (asynchronous workers), advantage actor-critic",
    "BCAgentParameters": "BC, behavioral cloning, imitation",
    "DDQNBCQAgentParameters": "BCQ, discrete BCQ",
    "BootstrappedDQNAgentParameters": "Bootstrapped DQN",
    "CategoricalDQNAgentParameters": "C51, categorical or distributional DQN",
    "ClippedPPOAgentParameters": "PPO (the clipped objective, as in SB3's PPO)",
    "CQLAgentParameters": "CQL, discrete CQL",
    "DDPGAgentParameters": "DDPG",
    "DDQNAgentParameters": "Double DQN, DDQN; Dueling DQN with a dueling head",
    "DFPAgentParameters": "DFP, Direct Future Prediction",
    "DQNAgentParameters": "DQN, deep Q-network",
    "HACAgentParameters": "HAC, hierarchical actor-critic",
    "MMCAgentParameters": "MMC, mixed Monte Carlo",
    "NStepQAgentParameters": "n-step DQN, n-step Q-learning",
    "RolloutNStepQAgentParameters": "asynchronous n-step Q-learning",
    "NAFAgentParameters": "NAF, normalized advantage functions",
    "NECAgentParameters": "NEC, neural episodic control",
    "PALAgentParameters": "PAL, persistent advantage learning",
    "PolicyGradientsAgentParameters": "REINFORCE, vanilla policy gradient",
    "PPOAgentParameters": "PPO with an adaptive KL penalty",
    "QRDQNAgentParameters": "QR-DQN, quantile regression DQN",
    "R2D2AgentParameters": "R2D2, recurrent DQN, DRQN",
    "RainbowAgentParameters": "Rainbow",
    "SACAgentParameters": "SAC, soft actor-critic",
    "TD3AgentParameters": "TD3, twin delayed DDPG",
    "WolpertingerAgentParameters": "Wolpertinger",
}
"""The names users search for, by parameter class: `ALSO_KNOWN_AS` must name every agent
(the docs tests check it), so that a new agent's row is never without them."""

OBSERVATIONS = spaces.Dict(
    {
        "observation": spaces.Box(-1.0, 1.0, (4,), np.float32),
        # What the agents that read more than an observation need to be built at all:
        # DFP's measurements, HAC's (and hindsight replay's) goals.
        "measurements": spaces.Box(-1.0, 1.0, (1,), np.float32),
        "achieved_goal": spaces.Box(-1.0, 1.0, (2,), np.float32),
        "desired_goal": spaces.Box(-1.0, 1.0, (2,), np.float32),
    }
)
"""The observation every agent is built on (a network reads only the keys it declares)."""

SPACES: dict[str, spaces.Space[Any]] = {
    "Discrete": spaces.Discrete(3),
    "Box": spaces.Box(-1.0, 1.0, (2,), np.float32),
    "MultiDiscrete": spaces.MultiDiscrete([2, 3]),
    "MultiBinary": spaces.MultiBinary(3),
}
"""The kinds of action space an agent is tried on (the kinds Stable-Baselines3's table has)."""


@dataclass(frozen=True)
class Row:
    """What the matrix says of one agent."""

    params: type
    action_spaces: tuple[str, ...]
    learns_from: str
    recurrent: bool
    rollout_workers: str
    """``yes``, or why not."""
    asynchronous: tuple[str, ...]
    """The shipped presets that train it with asynchronous workers."""
    multi_agent: tuple[str, ...]
    """The shipped multi-agent presets that use it."""
    export: str
    """``yes``, ``feed-forward networks`` or ``no``."""
    why_not_workers: str | None = None
    """Why ``-n`` refuses the agent, where it does."""
    why_not_export: str | None = None
    """Why `coach export` refuses the agent's policy, where it does."""


def _gaussian(params: Any) -> Any | None:
    """``params`` with each categorical policy head made a Gaussian one of the same name, as
    a preset for a Box writes it (Pendulum_ClippedPPO); ``None`` when it has none."""
    if not any(
        isinstance(h, CategoricalPolicyHeadParameters)
        for network in params.network_wrappers.values()
        for h in network.heads
    ):
        return None
    changed = copy.deepcopy(params)
    for network in changed.network_wrappers.values():
        network.heads = [
            GaussianPolicyHeadParameters(name=h.name)
            if isinstance(h, CategoricalPolicyHeadParameters)
            else h
            for h in network.heads
        ]
    return changed


def _candidates(params: type, presets: list[PresetEntry]) -> list[Any]:
    """The agent's default parameters, then every shipped preset's parameters of it, each
    followed by its Gaussian twin (`_gaussian`) where it has one."""
    found: list[Any] = [params()]
    for preset in presets:
        found += [a for a in preset.agent_parameters if type(a) is params]
    with_twins = []
    for candidate in found:
        with_twins.append(candidate)
        twin = _gaussian(candidate)
        if twin is not None:
            with_twins.append(twin)
    return with_twins


def _build(params: Any, action_space: spaces.Space[Any]) -> Any:
    """The agent of ``params`` on `OBSERVATIONS` and ``action_space``, or ``None`` when it
    refuses them."""
    try:
        return params.agent_class()(params, OBSERVATIONS, action_space, 1, seed=0)
    except CoachError:
        return None


def _exports(agent: Any, action_space: spaces.Space[Any]) -> str | None:
    """``None`` when `ExportedPolicy` takes the agent's policy, else its refusal."""
    from coach.export.policy import ExportedPolicy

    try:
        ExportedPolicy(agent, OBSERVATIONS, action_space)
    except CoachError as error:
        return str(error)
    return None


def _kind(preset: PresetEntry) -> str:
    graph = preset.graph_type
    if issubclass(graph, BatchRLGraphManager):
        return "batch"
    if issubclass(graph, HRLGraphManager):
        return "hierarchy"
    if issubclass(graph, MultiAgentGraphManager):
        return "multi-agent"
    if issubclass(graph, AsynchronousGraphManager):
        return "asynchronous"
    return "single"


def row(params: type, catalogue: Catalogue) -> Row:
    presets = catalogue.presets_of(params)
    kinds = {p.name: _kind(p) for p in presets}
    built: dict[str, Any] = {}
    for name, space in SPACES.items():
        for candidate in _candidates(params, presets):
            agent = _build(candidate, space)
            if agent is not None:
                built[name] = agent
                break
    if not built:
        raise CoachError(f"{params.__name__} builds on none of {list(SPACES)}")
    memory = params().memory
    if presets and all(kind == "batch" for kind in kinds.values()):
        learns_from = "offline (a dataset)"
    elif isinstance(memory, RolloutParameters):
        learns_from = "on-policy"
    else:
        learns_from = "off-policy"
    agent_class = params().agent_class()
    why_not_workers = agent_class.not_on_workers
    graphs = sorted(set(kinds.values()))
    if why_not_workers is None and presets and set(graphs) <= {"batch", "hierarchy"}:
        why_not_workers = (
            "its presets are "
            + " and ".join(f"{g} graphs" for g in graphs)
            + ", whose agents act in no rollout worker"
        )
    workers = "yes" if why_not_workers is None else "no"
    refusals = [_exports(agent, SPACES[space]) for space, agent in built.items()]
    why_not_export = None
    if all(refusal is not None for refusal in refusals):
        why_not_export = refusals[0]
    elif presets and set(graphs) <= {"hierarchy", "multi-agent"}:
        why_not_export = (
            "its presets are "
            + " and ".join(f"{g} graphs" for g in graphs)
            + "; only one agent acting alone in its environment can be exported"
        )
    if why_not_export is not None:
        export = "no"
    elif agent_class.recurrent:
        export = "feed-forward networks"
    else:
        export = "yes"
    for agent in built.values():
        with contextlib.suppress(AttributeError):
            agent.close()
    return Row(
        params=params,
        action_spaces=tuple(built),
        learns_from=learns_from,
        recurrent=bool(agent_class.recurrent),
        rollout_workers=workers,
        asynchronous=tuple(p for p, kind in kinds.items() if kind == "asynchronous"),
        multi_agent=tuple(p for p, kind in kinds.items() if kind == "multi-agent"),
        export=export,
        why_not_workers=why_not_workers,
        why_not_export=why_not_export,
    )


def rows(catalogue: Catalogue) -> list[Row]:
    return [row(params, catalogue) for params in catalogue.agents]


def _presets(page: str, names: tuple[str, ...]) -> str:
    """How many presets, linked to the agent page's presets; ``-`` for none."""
    if not names:
        return "-"
    count = f"{len(names)} preset" + ("s" if len(names) > 1 else "")
    return f"[{count}]({page}#presets)"


def _no(page: str, cell: str) -> str:
    """A ``no`` links to where the agent's page says why."""
    return f"[no]({page}#what-it-works-with)" if cell == "no" else cell


def works_with(r: Row) -> str:
    """The agent page's section: its row of the matrix, with the reasons behind a no."""
    lines = [
        f"- Action spaces: {', '.join(r.action_spaces)}.",
        f"- Learns: {r.learns_from}.",
        "- Recurrent networks (LSTM, GRU): " + ("yes." if r.recurrent else "no."),
        "- Rollout workers (`-n`): "
        + ("yes." if r.why_not_workers is None else f"no: {r.why_not_workers.rstrip('.')}."),
        "- Export (`coach export`): "
        + (
            f"no: {r.why_not_export.rstrip('.')}."
            if r.why_not_export is not None
            else "with feed-forward networks (a recurrent policy carries a hidden state)."
            if r.export != "yes"
            else "yes."
        ),
    ]
    return (
        "## What it works with\n\n"
        "Found out from the code as the site is built, as the "
        "[algorithms matrix](index.md#algorithms-matrix) is:\n\n" + "\n".join(lines) + "\n"
    )


def matrix(catalogue: Catalogue, found: list[Row]) -> str:
    """The matrix as a Markdown table, with what its columns mean."""
    kinds = [name for name in SPACES if any(name in r.action_spaces for r in found)]
    none = [name for name in SPACES if name not in kinds]
    body = []
    for r in found:
        name = r.params.__name__.removesuffix("AgentParameters")
        page = f"{name}.md"
        workers = _no(page, r.rollout_workers)
        if r.asynchronous:
            workers += "; async: " + _presets(page, r.asynchronous)
        body.append(
            [
                f"[{breakable(name)}]({page})",
                ALSO_KNOWN_AS.get(r.params.__name__, ""),
                ", ".join(r.action_spaces),
                r.learns_from,
                "yes" if r.recurrent else "-",
                workers,
                _presets(page, r.multi_agent),
                _no(page, r.export),
            ]
        )
    headers = [
        "agent",
        "also known as",
        "actions",
        "learns",
        "recurrent",
        "rollout workers (`-n`)",
        "multi-agent presets",
        "export",
    ]
    notes = (
        f"No agent acts in a {' or '.join(none)} action space; an action filter maps one "
        "onto an agent's (a continuous task discretized for a Q agent: "
        "[Filters](../filters.md)). "
        if none
        else ""
    )
    return (
        "Every row is found out from the code as the site is built (`docs/_ext/"
        "algorithm_matrix.py` says how). An action space is the agent's when the agent "
        "builds on one, with its default parameters or a shipped preset's (a policy agent "
        "with a `GaussianPolicyHeadParameters` head for a Box). *Learns* is on-policy for "
        "an agent with a rollout memory, off-policy for one with a replay, offline for one "
        "whose every preset learns from a dataset. *Recurrent* agents learn LSTM or GRU "
        "networks over sequences. *Rollout workers* is whether `coach -n N` runs the agent, "
        "with the shipped presets that train it with asynchronous workers (A3C-style: "
        "*async*); those and *multi-agent presets* count shipped presets, so a `-` there "
        "means that no shipped preset does it, not that the agent cannot: a multi-agent "
        "level takes an agent of any family ([Multi-agent levels](../multi-agent.md)). "
        "*Export* is whether `coach export` writes its policy as an ONNX or TorchScript "
        "file. " + notes + "\n\n" + table(headers, body)
    )
