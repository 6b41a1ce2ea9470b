"""Self-play for two-player zero-sum games: an agent against frozen snapshots of itself.

The learner takes one seat per environment copy, drawn anew for every episode, so that it
learns to play either side. The other seat is played by an opponent from a bounded pool of
snapshots of the learner's policy: one is taken at the start and then every
``snapshot_every`` of the learner's training env steps, the oldest leaving when the pool is
full, and every episode draws its opponent from the pool uniformly (as in Bansal et al.,
"Emergent complexity via multi-agent competition", 2018, whose opponents are sampled from
the learner's past versions rather than only its latest). Opponents do not learn; they act
with the exploration the learner had at their snapshot (or greedily). In evaluation the
learner plays the ``evaluation_opponent`` instead: a uniformly random (legal) player, or the
newest snapshot, greedy.

The pool, the draws in flight and the generator are saved in checkpoints.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from coach import validation as check
from coach.agents.agent import Agent
from coach.core.action_masks import ACTION_MASK, legal_random_actions
from coach.core.run_phase import EVALUATE, TRAIN, RunPhase
from coach.core.step_units import EnvironmentSteps
from coach.core.types import ActionInfo, EnvResponse, Observation
from coach.environments.multi_agent import MultiAgentEnvironment, MultiAgentResponse
from coach.errors import CoachError
from coach.exploration.exploration_policy import random_actions
from coach.logging.experiment_logger import ExperimentLogger
from coach.multi_agent.level import MultiAgentLevelManager
from coach.multi_agent.seats import Seats
from coach.multi_agent.stacked import StackedResponse
from coach.parallel.exchange import load_policy_state, policy_state


@dataclass(slots=True, kw_only=True)
class SelfPlayParameters:
    """How an agent plays against snapshots of itself."""

    learner: str
    """The name of the agent that learns (its snapshots are the opponents)."""
    snapshot_every: EnvironmentSteps = field(default_factory=lambda: EnvironmentSteps(5_000))
    """How often a snapshot joins the pool, in the learner's training env steps."""
    pool_size: int = 10
    """The most snapshots kept; the oldest leaves when a new one comes."""
    evaluation_opponent: str = "random"
    """Whom the learner plays in evaluation: ``random`` (uniform legal moves) or ``latest``
    (the newest snapshot, greedy)."""
    opponents_explore: bool = True
    """Snapshots play with the exploration the learner had when they were taken (its
    epsilon, its noise), so that the learner meets more than one line of play per
    opponent; greedy otherwise."""

    def validate(self) -> None:
        check.name("learner", self.learner)
        check.steps("snapshot_every", self.snapshot_every, (EnvironmentSteps,), 1)
        check.whole("pool_size", self.pool_size, 1)
        check.one_of("evaluation_opponent", self.evaluation_opponent, ("random", "latest"))


class OpponentPool:
    """The opponents' side of self-play: one slot per environment copy, played by a snapshot
    drawn per episode (or by the evaluation opponent), never learning.

    Args:
        params: The self-play parameters.
        make_player: Makes an acting copy of the learner (an agent built without its
            learning side), for ``num_envs`` slots.
        num_envs: The environment copies (the pool's slots).
        seed: Seeds the draws of opponents.
    """

    name = "opponents"

    def __init__(
        self, params: SelfPlayParameters, make_player: Callable[[], Agent], num_envs: int, seed: int
    ) -> None:
        self.params = params
        self.num_envs = num_envs
        self.rng = np.random.default_rng(seed)
        self.phase = RunPhase.HEATUP
        self._make_player = make_player
        self.players: list[Agent] = []
        """One acting agent per pool entry, built as the pool grows."""
        self.snapshots: list[dict[str, Any]] = []
        """The policy states in the pool, oldest first."""
        self.snapshot_steps: list[int] = []
        """The learner's training env steps at each snapshot."""
        self.drawn = np.zeros(num_envs, dtype=np.int64)
        """Which snapshot plays in each copy's episode."""
        self.state: Observation = {}
        self.training_steps = 0
        self.memory = None

    # -- the pool ---------------------------------------------------------------------------

    def take_snapshot(self, learner: Agent) -> None:
        """The learner's policy as it is now joins the pool (the oldest leaves a full one)."""
        snapshot = copy.deepcopy(policy_state(learner))
        if len(self.snapshots) == self.params.pool_size:
            self.snapshots.pop(0)
            self.snapshot_steps.pop(0)
            self.players.append(self.players.pop(0))  # reuse the oldest's networks
        elif len(self.players) < len(self.snapshots) + 1:
            self.players.append(self._make_player())
        self.snapshots.append(snapshot)
        self.snapshot_steps.append(learner.training_env_steps)
        load_policy_state(self.players[len(self.snapshots) - 1], snapshot)

    def due(self, learner: Agent) -> bool:
        """Whether the learner has trained ``snapshot_every`` env steps since the last one."""
        if not self.snapshots:
            return True
        return (
            learner.training_env_steps - self.snapshot_steps[-1]
            >= self.params.snapshot_every.num_steps
        )

    def draw(self, copies: np.ndarray) -> None:
        """New episodes in ``copies`` (a (B,) mask): each draws its opponent."""
        count = int(np.count_nonzero(copies))
        if count and self.snapshots:
            self.drawn[copies] = self.rng.integers(len(self.snapshots), size=count)

    def pool_state(self) -> dict[str, Any]:
        """The snapshots, for the pools of rollout workers (references, not copies)."""
        return {"snapshots": self.snapshots, "snapshot_steps": list(self.snapshot_steps)}

    def load_pool_state(self, state: dict[str, Any]) -> None:
        """Play the snapshots `pool_state` gave (a worker's pool follows its learner's)."""
        if list(state["snapshot_steps"]) == self.snapshot_steps:
            return  # the same pool: keep the players as they are
        while len(self.players) < len(state["snapshots"]):
            self.players.append(self._make_player())
        for player, snapshot in zip(self.players, state["snapshots"], strict=False):
            load_policy_state(player, snapshot)
        self.snapshots = list(state["snapshots"])
        self.snapshot_steps = [int(s) for s in state["snapshot_steps"]]
        self.drawn = np.minimum(self.drawn, max(len(self.snapshots) - 1, 0))

    # -- the slot protocol of a multi-agent level -------------------------------------------

    def reset(self, response: EnvResponse) -> None:
        self.state = {key: np.array(value) for key, value in response.observation.items()}

    def act(self, rows: np.ndarray | None = None) -> ActionInfo:
        rows = np.arange(self.num_envs) if rows is None else rows
        state = {key: value[rows] for key, value in self.state.items()}
        if self.phase is EVALUATE and self.params.evaluation_opponent == "random":
            action = self._random(state, len(rows))
        elif self.phase is EVALUATE or not self.snapshots:  # the newest snapshot
            action = self._play(len(self.snapshots) - 1, state, rows)
        else:
            drawn = self.drawn[rows]
            action = None
            for k in np.unique(drawn):
                mine = drawn == k
                chosen = self._play(int(k), {key: v[mine] for key, v in state.items()}, rows[mine])
                if action is None:
                    action = np.zeros((len(rows), *chosen.shape[1:]), dtype=chosen.dtype)
                action[mine] = chosen
        assert action is not None
        return ActionInfo(action=action, env_action=action)

    def _play(self, k: int, state: Observation, rows: np.ndarray) -> np.ndarray:
        if k < 0:
            return self._random(state, len(rows))
        player = self.players[k]
        filtered = player.input_filter.filter_observation(state, update=False)
        explore = self.params.opponents_explore and self.phase is not EVALUATE
        action = player.policy.act(filtered, TRAIN if explore else EVALUATE, rows).action
        return (
            player.output_filter.filter(action) if player.output_filter.action_filters else action
        )

    def _random(self, state: Observation, count: int) -> np.ndarray:
        if ACTION_MASK in state:
            return legal_random_actions(state[ACTION_MASK], self.rng)
        if not self.players:
            raise CoachError("a random opponent needs the action space of a player")
        return random_actions(self.players[0].policy.action_space, count, self.rng)

    def observe(
        self, response: EnvResponse, rows: np.ndarray | None = None, info: ActionInfo | None = None
    ) -> None:
        rows = np.arange(self.num_envs) if rows is None else rows
        started = response.episode_started
        for key, value in response.next_observation.items():
            self.state[key][rows] = np.where(
                started.reshape(-1, *[1] * (value.ndim - 1)), response.observation[key], value
            )

    def begin(self, observation: Observation, rows: np.ndarray) -> None:
        for key, value in observation.items():
            self.state[key][rows] = value

    def train(self) -> int:
        return 0

    # -- checkpoints ------------------------------------------------------------------------

    def state_dict(self, include_memory: bool = False) -> dict[str, Any]:
        return {
            "snapshots": self.snapshots,
            "snapshot_steps": list(self.snapshot_steps),
            "drawn": self.drawn.copy(),
            "rng": self.rng.bit_generator.state,
            "current_state": self.state,
            "players": [
                {
                    "rng": player.rng.bit_generator.state,
                    "torch_rng": player.torch_generator.get_state(),
                    "policy": player.policy.state_dict(),
                }
                for player in self.players[: len(self.snapshots)]
            ],
        }

    def load_state_dict(self, state: dict[str, Any], episodes_in_flight: bool = True) -> None:
        self.snapshots, self.snapshot_steps, self.players = [], [], []
        for snapshot, steps in zip(state["snapshots"], state["snapshot_steps"], strict=True):
            self.players.append(self._make_player())
            load_policy_state(self.players[-1], snapshot)
            self.snapshots.append(snapshot)
            self.snapshot_steps.append(int(steps))
        self.drawn = np.asarray(state["drawn"], dtype=np.int64)
        self.rng.bit_generator.state = state["rng"]
        for player, acting in zip(self.players, state["players"], strict=True):
            # Opponents explore as they act: their draws go on from where they were.
            player.rng.bit_generator.state = acting["rng"]
            player.torch_generator.set_state(acting["torch_rng"])
            player.policy.load_state_dict(acting["policy"])
        if episodes_in_flight:
            self.state = state["current_state"]


class SelfPlayLevelManager(MultiAgentLevelManager):
    """A two-player level where the learner plays snapshots of itself (`OpponentPool`).

    Every new episode of a copy draws the learner's seat (either player, uniformly) and its
    opponent; the level's reward and return are the learner's, and its ``is_success`` (in
    the last step's info) whether the learner won: the evaluation's success rate is its win
    rate.

    Args:
        name: The level's name in logs.
        learner: The learning agent (one slot per copy).
        opponents: The opponents' pool (one slot per copy).
        environment: A two-player multi-agent environment.
        seed: Seeds the draws of seats.
        logger: Where each id's episodes are reported, if anywhere.
    """

    def __init__(
        self,
        name: str,
        learner: Agent,
        opponents: OpponentPool,
        environment: MultiAgentEnvironment,
        seed: int,
        logger: ExperimentLogger | None = None,
    ) -> None:
        if len(environment.agent_ids) != 2:
            raise CoachError(
                f"self-play takes a two-player game; this one has ids {environment.agent_ids}"
            )
        self.rng = np.random.default_rng(seed)
        copies = np.arange(environment.num_envs, dtype=np.int64)
        seats = {
            learner.name: Seats(np.zeros_like(copies), copies.copy()),
            opponents.name: Seats(np.ones_like(copies), copies.copy()),
        }
        self.learner = learner
        self.opponents = opponents
        super().__init__(
            name, {learner.name: learner, opponents.name: opponents}, seats, environment, logger
        )

    def on_reset(self, stacked: StackedResponse, copies: np.ndarray) -> bool:
        count = int(np.count_nonzero(copies))
        seat = self.rng.integers(2, size=count)
        self.seats[self.learner.name].ids[copies] = seat
        self.seats[self.opponents.name].ids[copies] = 1 - seat
        self.scored[:, copies] = np.arange(2)[:, None] == seat[None, :]
        self.opponents.draw(copies)
        return True

    def trained(self) -> None:
        """A snapshot of the learner joins the pool when due (the first at once)."""
        if self.phase is not EVALUATE and self.opponents.due(self.learner):
            self.opponents.take_snapshot(self.learner)

    def policy_state(self) -> dict[str, Any]:
        """The learner's policy, and the pool of snapshots its opponents are drawn from."""
        return {**super().policy_state(), self.opponents.name: self.opponents.pool_state()}

    def load_policy_state(self, state: dict[str, Any]) -> None:
        super().load_policy_state(state)
        self.opponents.load_pool_state(state[self.opponents.name])

    def team_infos(
        self, stacked: StackedResponse, response: MultiAgentResponse
    ) -> list[dict[str, Any]]:
        """Per copy, whether the learner won the episode that ended (``is_success``)."""
        infos = [dict(info) for info in response.infos] or [{} for _ in range(self.num_envs)]
        for c in np.flatnonzero(response.copy_done):
            index = int(self.seats[self.learner.name].ids[c])
            infos[c]["is_success"] = float(stacked.episode_return[index, c] > 0)
        return infos

    def agents_state_dict(self, include_memory: bool = False) -> dict[str, Any]:
        return {**super().agents_state_dict(include_memory), "rng": self.rng.bit_generator.state}

    def load_agents_state_dict(self, state: Any, episodes_in_flight: bool = True) -> None:
        super().load_agents_state_dict(state, episodes_in_flight)
        self.rng.bit_generator.state = state["rng"]
        if episodes_in_flight and state["current"] is not None:
            seat = self.seats[self.learner.name].ids
            self.scored[:] = np.arange(2)[:, None] == seat[None, :]
