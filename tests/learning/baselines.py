"""The scripted players that multi-agent promises are measured against (`PresetValidation`'s
``baselines``), written here in the tests so that no preset grades itself.

- ``simple_spread``: a uniformly random policy, and a greedy-assignment one (each agent, in
  id order, heads for the nearest landmark no earlier agent has claimed), on MPE's
  simple_spread; their mean per-agent returns set the promise's floor.
- ``simple_tag``: uniformly random predators and scripted chasers (each runs straight at
  the prey), both against a uniformly random prey: the predators' mean per-agent returns.
- ``tictactoe``: a uniformly random legal player and a minimax player (perfect play); the
  trained ``best.pt`` plays each 200 games, half as either seat.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from coach.core.run_phase import RunPhase
from coach.graph_managers.parameters import RunContext
from coach.presets import PresetValidation, load_preset

EPISODES = 200
"""Episodes per baseline and per game series."""

# -- simple_spread --------------------------------------------------------------------------

MOVES = {(-1, 0): 1, (1, 0): 2, (0, -1): 3, (0, 1): 4}
"""MPE's discrete moves by direction of acceleration (0 is no move)."""


def greedy_assignment(
    observations: dict[str, np.ndarray], agents: list[str], landmarks: int
) -> dict[str, int]:
    """Each agent in id order claims the nearest unclaimed landmark and accelerates along
    the axis where the landmark is farthest, braking for its own velocity."""
    claimed: set[int] = set()
    actions = {}
    for agent in agents:
        observation = observations[agent]
        velocity = observation[0:2]
        relative = observation[4 : 4 + 2 * landmarks].reshape(landmarks, 2)
        for landmark in np.argsort(np.linalg.norm(relative, axis=1)):
            if int(landmark) not in claimed:
                claimed.add(int(landmark))
                break
        aim = relative[landmark] - 0.5 * velocity
        axis = int(np.argmax(np.abs(aim)))
        direction = [0, 0]
        direction[axis] = 1 if aim[axis] > 0 else -1
        actions[agent] = MOVES[(direction[0], direction[1])]
    return actions


def simple_spread(
    seed: int, kwargs: dict[str, Any], episodes: int = EPISODES
) -> tuple[float, float]:
    """The random and the greedy-assignment policies' mean per-agent returns, on episodes
    seeded from ``seed`` (the run's seed)."""
    from mpe2 import simple_spread_v3

    results = []
    for greedy in (False, True):
        env = simple_spread_v3.parallel_env(**kwargs)
        rng = np.random.default_rng(seed)
        returns = []
        for episode in range(episodes):
            observations, _ = env.reset(seed=seed * 100_000 + episode)
            total = 0.0
            while env.agents:
                if greedy:
                    actions = greedy_assignment(observations, env.agents, kwargs.get("N", 3))
                else:
                    actions = {a: int(rng.integers(5)) for a in env.agents}
                observations, rewards, _, _, _ = env.step(actions)
                total += sum(rewards.values())
            returns.append(total / len(env.possible_agents))
        env.close()
        results.append(float(np.mean(returns)))
    return results[0], results[1]


# -- simple_tag -----------------------------------------------------------------------------


def chase(observation: np.ndarray) -> int:
    """A predator's move straight at the prey: simple_tag's predator observes its velocity,
    position, the landmarks', the other agents' positions (the prey's last), then the
    prey's velocity."""
    relative = observation[-4:-2]
    axis = int(np.argmax(np.abs(relative)))
    direction = [0, 0]
    direction[axis] = 1 if relative[axis] > 0 else -1
    return MOVES[(direction[0], direction[1])]


def simple_tag(seed: int, kwargs: dict[str, Any], episodes: int = EPISODES) -> tuple[float, float]:
    """Uniformly random predators' and scripted chasers' mean per-predator returns, both
    against a uniformly random prey, on episodes seeded from ``seed``."""
    from mpe2 import simple_tag_v3

    results = []
    for chasing in (False, True):
        env = simple_tag_v3.parallel_env(**kwargs)
        rng = np.random.default_rng(seed)
        returns = []
        for episode in range(episodes):
            observations, _ = env.reset(seed=seed * 100_000 + episode)
            predators = [a for a in env.possible_agents if a.startswith("adversary")]
            total = 0.0
            while env.agents:
                actions = {
                    a: chase(observations[a])
                    if chasing and a in predators
                    else int(rng.integers(5))
                    for a in env.agents
                }
                observations, rewards, _, _, _ = env.step(actions)
                total += sum(rewards[a] for a in predators if a in rewards)
            returns.append(total / len(predators))
        env.close()
        results.append(float(np.mean(returns)))
    return results[0], results[1]


# -- tic-tac-toe ----------------------------------------------------------------------------

Player = Callable[[dict[str, np.ndarray]], int]
"""A move from a tic-tac-toe observation dict (``observation``, ``action_mask``)."""


LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


def _won(cells: tuple[int, ...], mark: int) -> bool:
    return any(all(cells[i] == mark for i in line) for line in LINES)


@functools.cache
def _value(cells: tuple[int, ...]) -> int:
    """Negamax value for the player to move (mark 1; the other is 2) with perfect play on
    both sides: +1 a win, 0 a draw, -1 a loss."""
    if _won(cells, 2):
        return -1
    free = [i for i, c in enumerate(cells) if c == 0]
    if not free:
        return 0
    return max(-_value(_after(cells, move)) for move in free)


def _after(cells: tuple[int, ...], move: int) -> tuple[int, ...]:
    """The board after the mover plays ``move``, from the other player's side."""
    after = list(cells)
    after[move] = 1
    return tuple(0 if c == 0 else 3 - c for c in after)


def minimax_player(seed: int) -> Player:
    """Perfect play, a uniformly random choice among the best moves (so that its games
    cover many lines, not one), from PettingZoo's tic-tac-toe observation (3, 3, 2):
    channel 0 the mover's marks, channel 1 the other's, square ``k`` at ``reshape(9, 2)[k]``."""
    rng = np.random.default_rng(seed)

    def move(observation: dict[str, np.ndarray]) -> int:
        flat = observation["observation"].reshape(9, 2)
        cells = tuple(1 if flat[k, 0] else 2 if flat[k, 1] else 0 for k in range(9))
        free = [k for k in range(9) if cells[k] == 0]
        values = [-_value(_after(cells, k)) for k in free]
        best = [k for k, v in zip(free, values, strict=True) if v == max(values)]
        return int(rng.choice(best))

    return move


@dataclass(slots=True)
class Games:
    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def played(self) -> int:
        return self.wins + self.draws + self.losses

    def rate(self, count: int) -> float:
        return count / self.played


def play(learner: Player, opponent: Player, games: int, seed: int) -> Games:
    """``games`` games of ``learner`` against ``opponent``, the learner first in every other."""
    from pettingzoo.classic import tictactoe_v3

    env = tictactoe_v3.env()
    result = Games()
    for game in range(games):
        env.reset(seed=seed + game)
        learner_seat = env.possible_agents[game % 2]
        outcome = 0.0
        for agent in env.agent_iter():
            observation, reward, terminated, truncated, _ = env.last()
            if agent == learner_seat:
                outcome = reward
            if terminated or truncated:
                env.step(None)
                continue
            player = learner if agent == learner_seat else opponent
            env.step(player(observation))
        if outcome > 0:
            result.wins += 1
        elif outcome < 0:
            result.losses += 1
        else:
            result.draws += 1
    env.close()
    return result


def random_player(seed: int) -> Player:
    rng = np.random.default_rng(seed)
    return lambda observation: int(rng.choice(np.flatnonzero(observation["action_mask"])))


def checkpoint_player(name: str, state: dict[str, Any], seed: int) -> Player:
    """The learner of preset ``name`` as ``state`` holds it, acting greedily."""
    graph = load_preset(name).graph_manager
    graph.create_graph(RunContext(seed=seed, quiet=True))
    graph.load_state_dict(state, whole_run=False)
    agent = next(iter(graph.levels[0].agents.values()))

    def move(observation: dict[str, np.ndarray]) -> int:
        batch = {key: np.asarray(value)[None] for key, value in observation.items()}
        filtered = agent.input_filter.filter_observation(batch, update=False)
        return int(agent.policy.act(filtered, RunPhase.EVALUATE).action[0])

    return move


def tictactoe_verdict(name: str, state: dict[str, Any], seed: int) -> tuple[str, str]:
    """Why ``best.pt`` (``state``) breaks the tic-tac-toe promise ("" when it keeps it), and
    the figures: against a random player it wins at least 85% and loses at most 2%, against
    minimax it loses at most 10%, over `EPISODES` games as either seat."""
    learner = checkpoint_player(name, state, seed)
    against_random = play(learner, random_player(seed), EPISODES, seed)
    against_minimax = play(learner, minimax_player(seed), EPISODES, seed)
    figures = (
        f"vs random {against_random.wins}/{against_random.draws}/{against_random.losses}, "
        f"vs minimax {against_minimax.wins}/{against_minimax.draws}/{against_minimax.losses} "
        f"(won/drawn/lost of {EPISODES})"
    )
    if against_random.rate(against_random.wins) < 0.85:
        return "best.pt wins under 85% against a random player", figures
    if against_random.rate(against_random.losses) > 0.02:
        return "best.pt loses over 2% against a random player", figures
    if against_minimax.rate(against_minimax.losses) > 0.10:
        return "best.pt loses over 10% against minimax", figures
    return "", figures


def resolve(name: str, validation: PresetValidation, seed: int) -> tuple[PresetValidation, str]:
    """``validation`` with its floor set from its baselines on ``seed``, and the baselines'
    figures for the table."""
    scripted = {"simple_spread": (simple_spread, "greedy"), "simple_tag": (simple_tag, "chasers")}
    if validation.baselines in scripted and validation.gap_closed is not None:
        environment = load_preset(name).graph_manager.parameters()["environment"]
        baseline, strong = scripted[validation.baselines]
        low, high = baseline(seed, dict(environment.kwargs))
        resolved = validation.resolved(low, high)
        assert resolved.min_reward is not None
        figures = (
            f"random {low:.2f}, {strong} {high:.2f}, floor "
            f"{resolved.min_reward / validation.per_agent:.2f} per agent"
        )
        return resolved, figures
    return validation, ""
