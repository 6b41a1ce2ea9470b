"""Two scripted PettingZoo environments for the multi-agent adapters' tests.

Everything they return is a hand-computable function of the ids, the step and the actions,
plus one number from their seeded generator (so that seeding and restored generators show):

- `LeavingParallelEnv` (parallel API): three ids; ``agent_2`` leaves (terminated) after its
  second step, the others are truncated at step 5. The action mask is in the info.
- `TurnTakingAECEnv` (AEC API): two players add 0, 1 or 2 to a total in turns; who brings it
  to the target wins. A Dict observation carries the action mask.

Load them through the adapter's ``module:name`` (``tests.multi_agent_envs:LeavingParallelEnv``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv


class LeavingParallelEnv(ParallelEnv):
    """Three ids act at once; ``agent_2`` leaves early, the others run to a time limit.

    Id ``k``'s observation at step ``t`` of the instance's ``e``-th episode (from 0) is
    ``[k, t, e, u]``, ``u`` a uniform draw of the seeded generator. The reward of its step into
    ``t`` with action ``a`` is ``100 * a + 10 * k + t``. ``agent_2`` terminates at step
    ``leave_at``, ``agent_0`` and ``agent_1`` are truncated at step ``horizon``. The info of
    each id holds its action mask: action 2 is allowed at even steps only.

    Args:
        horizon: The step at which the ids still in play are truncated.
        leave_at: The step at which ``agent_2`` terminates.
        strict: Refuse a masked action (ValueError).
    """

    metadata = {"name": "leaving_parallel_v0", "render_modes": []}
    render_mode = None

    def __init__(self, horizon: int = 5, leave_at: int = 2, strict: bool = True) -> None:
        self.possible_agents = ["agent_0", "agent_1", "agent_2"]
        self.agents: list[str] = []
        self.observation_spaces = {
            a: spaces.Box(-np.inf, np.inf, shape=(4,), dtype=np.float32)
            for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(3) for a in self.possible_agents}
        self.horizon = horizon
        self.leave_at = leave_at
        self.strict = strict
        self.np_random = np.random.default_rng()
        self.episode = -1
        self.t = 0

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def _observation(self, agent: str) -> np.ndarray:
        k = self.possible_agents.index(agent)
        return np.array([k, self.t, self.episode, self.np_random.random()], dtype=np.float32)

    def _mask(self) -> np.ndarray:
        return np.array([1, 1, self.t % 2 == 0], dtype=np.int8)

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, dict[str, Any]]]:
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
        self.episode += 1
        self.t = 0
        self.agents = list(self.possible_agents)
        observations = {a: self._observation(a) for a in self.agents}
        return observations, {a: {"action_mask": self._mask()} for a in self.agents}

    def step(self, actions: dict[str, Any]) -> tuple[dict[str, Any], ...]:
        if set(actions) != set(self.agents):
            raise ValueError(f"actions for {sorted(actions)}, agents in play {self.agents}")
        mask = self._mask()
        self.t += 1
        observations, rewards, terminations, truncations, infos = {}, {}, {}, {}, {}
        for agent in self.agents:
            action = int(actions[agent])
            if self.strict and not mask[action]:
                raise ValueError(f"{agent}'s action {action} is masked at step {self.t - 1}")
            k = self.possible_agents.index(agent)
            rewards[agent] = float(100 * action + 10 * k + self.t)
            terminations[agent] = agent == "agent_2" and self.t >= self.leave_at
            truncations[agent] = self.t >= self.horizon and not terminations[agent]
            observations[agent] = self._observation(agent)
            infos[agent] = {"action_mask": self._mask()}
        self.agents = [a for a in self.agents if not (terminations[a] or truncations[a])]
        return observations, rewards, terminations, truncations, infos


class TurnTakingAECEnv(AECEnv):
    """Two players add 0, 1 or 2 to a total in turns, ``player_0`` first; passing (0) twice
    in a row is not allowed. Who brings the total to ``target`` wins.

    A move of ``a`` rewards the mover ``+a`` and the other ``-a``; the winning move adds
    ``+10`` to the mover and ``-10`` to the other (zero-sum). After ``max_moves`` moves without
    a winner both are truncated. Player ``p``'s observation is ``[p, mover, moves, total,
    episode, u]`` (``u`` drawn from the seeded generator at the reset) and its action mask,
    all zeros when it is not its turn.

    Args:
        target: The total that wins.
        max_moves: The moves after which the game is truncated.
        strict: Refuse a masked action (ValueError).
    """

    metadata = {"name": "turn_taking_v0", "render_modes": [], "is_parallelizable": False}
    render_mode = None

    def __init__(self, target: int = 4, max_moves: int = 6, strict: bool = True) -> None:
        super().__init__()
        self.possible_agents = ["player_0", "player_1"]
        self.agents: list[str] = []
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(-np.inf, np.inf, shape=(6,), dtype=np.float32),
                    "action_mask": spaces.Box(0, 1, shape=(3,), dtype=np.int8),
                }
            )
            for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(3) for a in self.possible_agents}
        self.target = target
        self.max_moves = max_moves
        self.strict = strict
        self.np_random = np.random.default_rng()
        self.episode = -1

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
        self.episode += 1
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = self.agents[0]
        self.moves = 0
        self.total = 0
        self.passed = False
        self.noise = float(self.np_random.random())

    def _mask(self, agent: str) -> np.ndarray:
        if agent != self.agent_selection:
            return np.zeros(3, dtype=np.int8)
        return np.array([not self.passed, 1, 1], dtype=np.int8)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        mover = self.possible_agents.index(self.agent_selection)
        values = [
            self.possible_agents.index(agent),
            mover,
            self.moves,
            self.total,
            self.episode,
            self.noise,
        ]
        return {
            "observation": np.array(values, dtype=np.float32),
            "action_mask": self._mask(agent),
        }

    def step(self, action: Any) -> None:
        mover = self.agent_selection
        if self.terminations[mover] or self.truncations[mover]:
            self._was_dead_step(action)
            return
        if self.strict and not self._mask(mover)[int(action)]:
            raise ValueError(f"{mover}'s action {action} is masked")
        other = self.possible_agents[1 - self.possible_agents.index(mover)]
        self._cumulative_rewards[mover] = 0.0
        a = int(action)
        self.moves += 1
        self.total += a
        self.passed = a == 0
        self.rewards = {mover: float(a), other: float(-a)}
        if self.total >= self.target:
            self.rewards[mover] += 10.0
            self.rewards[other] -= 10.0
            self.terminations = dict.fromkeys(self.agents, True)
        elif self.moves >= self.max_moves:
            self.truncations = dict.fromkeys(self.agents, True)
        self._accumulate_rewards()
        self.agent_selection = other
