"""The multi-agent level: who acts, who observes what, on scripted multi-agent environments.

`Recorder` is a scripted slot actor that plays action 1 (legal in both scripted games) and
writes down every call; the expectations are computed by hand from the games' rules
(`tests.multi_agent_envs`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from coach.agents.dqn import DQNAgent, DQNAgentParameters
from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentSteps
from coach.core.types import ActionInfo, EnvResponse, Observation
from coach.environments.pettingzoo_environment import PettingZooEnvironmentParameters
from coach.errors import CoachError
from coach.multi_agent.level import MultiAgentLevelManager
from coach.multi_agent.seats import Seats, assign_ids

LEAVING = "tests.multi_agent_envs:LeavingParallelEnv"
TURNS = "tests.multi_agent_envs:TurnTakingAECEnv"


class Recorder:
    """Plays action 1 in every slot it is asked for; records acts, outcomes and begins."""

    def __init__(self, name: str, num_envs: int) -> None:
        self.name = name
        self.num_envs = num_envs
        self.phase = RunPhase.TRAIN
        self.acts: list[np.ndarray] = []
        self.outcomes: list[dict[str, Any]] = []
        self.begins: list[tuple[np.ndarray, np.ndarray]] = []
        self.state: Observation = {}

    def reset(self, response: EnvResponse) -> None:
        self.state = {k: np.array(v) for k, v in response.observation.items()}

    def act(self, rows: np.ndarray | None = None) -> ActionInfo:
        rows = np.arange(self.num_envs) if rows is None else rows
        self.acts.append(rows.copy())
        action = np.ones(len(rows), dtype=np.int64)
        return ActionInfo(action=action, env_action=action)

    def observe(
        self, response: EnvResponse, rows: np.ndarray | None = None, info: ActionInfo | None = None
    ) -> None:
        rows = np.arange(self.num_envs) if rows is None else rows
        self.outcomes.append(
            {
                "rows": rows.copy(),
                "reward": response.reward.copy(),
                "terminated": response.terminated.copy(),
                "truncated": response.truncated.copy(),
                "next": response.next_observation["observation"].copy(),
                "started": response.episode_started.copy(),
                "action": None if info is None else info.action.copy(),
            }
        )

    def begin(self, observation: Observation, rows: np.ndarray) -> None:
        self.begins.append((rows.copy(), observation["observation"].copy()))

    def train(self) -> int:
        return 0

    def state_dict(self, include_memory: bool = False) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any], episodes_in_flight: bool = True) -> None:
        pass


def level_of(env: str, num_envs: int, mapping: dict[str, str], **kwargs: Any) -> Any:
    environment = PettingZooEnvironmentParameters(env=env, num_envs=num_envs, kwargs=kwargs).build()
    names = list(dict.fromkeys(mapping.values()))
    played = assign_ids(environment.agent_ids, names, mapping)
    seats = {
        name: Seats.stacked([environment.agent_ids.index(i) for i in ids], num_envs)
        for name, ids in played.items()
    }
    actors = {name: Recorder(name, len(seats[name])) for name in names}
    level = MultiAgentLevelManager("main_level", actors, seats, environment)  # type: ignore[arg-type]
    return level, actors


def test_each_id_gets_its_own_observations_rewards_and_ends_and_a_leaver_stops_acting() -> None:
    level, actors = level_of(LEAVING, 2, {f"agent_{k}": f"a{k}" for k in range(3)})
    level.reset(seed=0)
    for _ in range(5):
        level.step()
    for k in range(3):
        for outcome in actors[f"a{k}"].outcomes:
            assert (outcome["next"][:, 0] == k).all()  # its own id's observations
    # agent_2 acted at steps 0 and 1 (every copy), left at step 2 (terminated), and did
    # not act again until its copies reset after step 5, where it begins anew.
    leaver = actors["a2"]
    assert [len(rows) for rows in leaver.acts] == [2, 2]
    assert [o["terminated"].tolist() for o in leaver.outcomes] == [[False, False], [True, True]]
    # action 1 into step t: 100 + 10 k + t
    assert [o["reward"].tolist() for o in leaver.outcomes] == [[121.0, 121.0], [122.0, 122.0]]
    ((rows, first),) = leaver.begins
    assert rows.tolist() == [0, 1] and first[:, :3].tolist() == [[2, 0, 1], [2, 0, 1]]
    stayer = actors["a0"]
    assert len(stayer.acts) == 5 and all(len(r) == 2 for r in stayer.acts)
    last = stayer.outcomes[-1]
    assert last["truncated"].all() and not last["terminated"].any()
    assert last["reward"].tolist() == [105.0, 105.0]
    assert last["started"].all()  # the next episode's first decision, in the same step
    assert last["next"][:, 1].tolist() == [5, 5]  # the finished episode's last observation


def test_a_shared_agent_has_the_ids_stacked_along_its_slots() -> None:
    level, actors = level_of(LEAVING, 2, {"*": "shared"}, leave_at=99)
    level.reset(seed=0)
    level.step()
    shared = actors["shared"]
    outcome = shared.outcomes[0]
    assert outcome["rows"].tolist() == list(range(6))
    assert outcome["next"][:, 0].tolist() == [0, 0, 1, 1, 2, 2]  # slot k * B + c plays id k
    assert outcome["reward"].tolist() == [101, 101, 111, 111, 121, 121]


def test_turns_alternate_and_each_outcome_sums_the_rewards_since_the_players_move() -> None:
    level, actors = level_of(TURNS, 1, {"player_0": "p0", "player_1": "p1"})
    level.reset(seed=0)
    p0, p1 = actors["p0"], actors["p1"]
    level.step()  # p0 adds 1; p1 decides for the first time: it begins
    assert len(p0.acts) == 1 and not p1.acts and not p0.outcomes
    ((_, first),) = p1.begins
    assert first[0, :4].tolist() == [1, 1, 1, 1]  # [player, mover, moves, total]
    level.step()  # p1 adds 1: p0's outcome is its +1 and p1's -1
    assert p0.outcomes[0]["reward"].tolist() == [0.0]
    assert p0.outcomes[0]["action"].tolist() == [1]  # the action it took a step before
    level.step()  # p0 adds 1 (total 3): p1's outcome is its +1 and p0's -1
    assert p1.outcomes[0]["reward"].tolist() == [0.0]
    level.step()  # p1 adds 1 (total 4, the target): p1 wins
    # p1: its winning move's 1 + 10 (p0's -1 came with its last outcome); p0: its move's +1,
    # then -1 - 10 from p1's
    assert p1.outcomes[-1]["reward"].tolist() == [11.0] and p1.outcomes[-1]["terminated"].all()
    assert p0.outcomes[-1]["reward"].tolist() == [-10.0] and p0.outcomes[-1]["terminated"].all()
    assert p0.outcomes[-1]["started"].all()  # p0 opens the next game in the same step
    assert [len(a) for a in p0.acts] == [1, 1] and [len(a) for a in p1.acts] == [1, 1]


def dqn(num_envs: int = 1) -> DQNAgentParameters:
    params = DQNAgentParameters()
    params.algorithm.batch_size = 8
    params.algorithm.num_consecutive_playing_steps = EnvironmentSteps(2)
    params.memory.max_size = 1000
    params.network_wrappers["main"].input_embedders["observation"].scheme = [16]
    params.network_wrappers["main"].middleware.scheme = [16]
    return params


def on_turns(agent_class: Any, params: Any, copies: int, seed: int = 0) -> tuple[Any, Any]:
    """An agent of ``agent_class`` playing both players of the turn-taking game in each of
    ``copies`` copies (slot ``p * copies + c``), and its level (in training)."""
    environment = PettingZooEnvironmentParameters(env=TURNS, num_envs=copies).build()
    spaces = environment.observation_spaces["player_0"], environment.action_spaces["player_0"]
    agent = agent_class(params, *spaces, num_envs=2 * copies, seed=seed)
    seats = {"agent": Seats.stacked([0, 1], copies)}
    level = MultiAgentLevelManager("main_level", {"agent": agent}, seats, environment)
    level.phase = RunPhase.TRAIN
    return agent, level


def fill_block(agent: Any, level: Any) -> Any:
    """Step ``level`` until ``agent``'s rollout block is full, without learning from it."""
    agent.train = lambda: 0  # the level trains its agents every step: held back a while
    while not agent.rollout.full:
        level.step()
    del agent.train
    return agent.rollout


def play_randomly(level: Any, seed: int, steps: int) -> None:
    """``steps`` steps of ``level`` from a reset with ``seed``, its agents acting at random."""
    level.phase = RunPhase.HEATUP
    level.reset(seed=seed)
    for _ in range(steps):
        level.step()


def test_a_shared_agent_computes_what_one_agent_computes_on_the_stacked_batch() -> None:
    params = dqn()
    environment = PettingZooEnvironmentParameters(env=LEAVING, num_envs=2, kwargs={"leave_at": 99})
    multi, single = environment.build(), environment.build()
    spaces = multi.observation_spaces["agent_0"], multi.action_spaces["agent_0"]
    shared = DQNAgent(params, *spaces, num_envs=6, seed=3)
    alone = DQNAgent(params, *spaces, num_envs=6, seed=3)
    level = MultiAgentLevelManager(
        "main_level", {"agent": shared}, {"agent": Seats.stacked([0, 1, 2], 2)}, multi
    )
    level.phase = RunPhase.TRAIN
    alone.phase = RunPhase.TRAIN
    level.reset(seed=5)
    ids = single.agent_ids

    def stacked(response: Any) -> EnvResponse:
        per_id = [response.responses[i] for i in ids]

        def cat(field: str) -> np.ndarray:
            return np.concatenate([getattr(r, field) for r in per_id])

        return EnvResponse(
            {k: np.concatenate([r.observation[k] for r in per_id]) for k in per_id[0].observation},
            cat("reward"),
            cat("terminated"),
            cat("truncated"),
            {
                k: np.concatenate([r.next_observation[k] for r in per_id])
                for k in per_id[0].observation
            },
            cat("episode_return"),
            cat("episode_length"),
            [],
            cat("episode_started"),
        )

    alone.reset(stacked(single.reset(seed=5)))
    for _ in range(40):
        level.step()
        info = alone.act()
        actions = np.asarray(info.env_action).reshape(3, 2)
        alone.observe(stacked(single.step({i: actions[k] for k, i in enumerate(ids)})))
        alone.train()
    assert shared.training_steps == alone.training_steps > 0
    for name, network in shared.networks.items():
        for a, b in zip(
            network.online.state_dict().values(),
            alone.networks[name].online.state_dict().values(),
            strict=True,
        ):
            assert torch.equal(a, b)


def test_an_agent_stores_only_its_slots_outcomes_on_a_turn_based_game() -> None:
    agent, level = on_turns(DQNAgent, dqn(), copies=3)
    level.phase = RunPhase.HEATUP
    level.reset(seed=1)
    outcomes = 0
    for _ in range(30):
        level.step()
        outcomes += int(
            sum(np.count_nonzero(level._current.outcome[i]) for i in range(2))  # type: ignore[union-attr]
        )
    assert len(agent.memory) == outcomes > 0
    batch = agent.memory.sample(8)
    # every stored step's action was legal in its state, and its player is the mover
    legal = batch.states["action_mask"][np.arange(8), batch.actions]
    assert legal.all()
    assert (batch.states["observation"][:, 0] == batch.states["observation"][:, 1]).all()


def test_frame_stacks_and_reward_returns_follow_each_slot_on_a_turn_based_game() -> None:
    from coach.filters.observation.stacking import ObservationStackingFilter
    from coach.filters.reward.normalization import RewardNormalizationFilter

    params = dqn()
    params.input_filter.observation_filters["observation"] = [ObservationStackingFilter(2)]
    params.input_filter.reward_filters = [RewardNormalizationFilter()]
    agent, level = on_turns(DQNAgent, params, copies=2)
    play_randomly(level, seed=2, steps=9)
    batch = agent.memory.sample(64)
    stacks = batch.states["observation"]  # (64, 2 frames, 6): [player, mover, moves, ...]
    # every frame of a stored stack is its own player's, and the frames are its own turns:
    # two moves apart within an episode (or the first observation repeated at its start)
    assert (stacks[:, :, 0] == stacks[:, :1, 0]).all()
    same_episode = stacks[:, 0, 4] == stacks[:, 1, 4]
    gap = stacks[:, 1, 2] - stacks[:, 0, 2]
    assert np.isin(gap[same_episode], [0, 2]).all() and (gap[same_episode] == 2).any()
    assert len(agent.input_filter.reward_filters[0].returns) == 4  # a return per slot


def test_hindsight_replay_keeps_each_slots_own_episode() -> None:
    from coach.memories.hindsight import EpisodicHindsightExperienceReplayParameters

    params = dqn()
    params.memory = EpisodicHindsightExperienceReplayParameters(
        achieved_goal_key="observation",
        desired_goal_key="observation",
        hindsight_transitions_per_regular_transition=0,  # the episodes as they were played
    )
    agent, level = on_turns(DQNAgent, params, copies=2)
    play_randomly(level, seed=5, steps=25)
    memory = agent.memory
    assert len(memory) > 0 and len(memory.open_episode_lengths) == 4
    count = len(memory)  # the ring has not wrapped: its rows in the order they were stored
    states = memory.states["observation"][:count]
    following = memory.next_states["observation"][:count]
    done = memory.terminated[:count] | memory.truncated[:count]
    assert done[-1] and (states[:, 0] == states[:, 1]).all()  # moves at the mover's turn
    # whole episodes, one after another: a row's successor is the next row's state, the
    # same player's next turn (two moves on), until the episode's last row
    going_on = ~done[:-1]
    np.testing.assert_array_equal(following[:-1][going_on], states[1:][going_on])
    np.testing.assert_array_equal(states[1:, 2][going_on], states[:-1, 2][going_on] + 2)
    assert (states[1:, 0][going_on] == states[:-1, 0][going_on]).all()


def test_mapping_patterns_assign_every_id_once() -> None:
    ids = ("adversary_0", "agent_0", "agent_1")
    assert assign_ids(ids, ["dqn", "ppo"], {"adversary_*": "dqn", "*": "ppo"}) == {
        "dqn": ["adversary_0"],
        "ppo": ["agent_0", "agent_1"],
    }
    with pytest.raises(CoachError, match="matches none"):
        assign_ids(ids, ["ppo"], {"agent_*": "ppo"})
    with pytest.raises(CoachError, match="play no id"):
        assign_ids(ids, ["dqn", "ppo"], {"*": "ppo"})


def test_the_level_is_an_environment_to_a_level_above() -> None:
    from coach.level_manager import LevelManager
    from tests.toys import scripted

    environment = PettingZooEnvironmentParameters(
        env=LEAVING, num_envs=2, kwargs={"leave_at": 99}
    ).build()
    spaces = environment.observation_spaces["agent_0"], environment.action_spaces["agent_0"]
    agent = DQNAgent(dqn(), *spaces, num_envs=6, seed=0)
    below = MultiAgentLevelManager(
        "below", {"agent": agent}, {"agent": Seats.stacked([0, 1, 2], 2)}, environment
    )
    answers: list[EnvResponse] = []
    step = below.step

    def recording(action: Any = None) -> EnvResponse:
        answers.append(step(action))
        return answers[-1]

    below.step = recording  # type: ignore[method-assign]
    top = LevelManager("top", scripted(1, below, "top"), below, steps_per_action=3)
    top.phase = RunPhase.HEATUP
    top.reset(seed=0)
    assert set(top.observation_space.spaces) == {f"agent_{k}.observation" for k in range(3)} | {
        f"agent_{k}.action_mask" for k in range(3)
    }
    first = top.step()
    assert len(answers) == 3 and (agent.goal == 1).all()  # the goal reached the agents
    np.testing.assert_allclose(first.reward, sum(a.reward for a in answers))
    second = top.step()  # the episode (5 steps) ends after two more: the top sees it
    assert len(answers) == 5 and second.truncated.all() and second.episode_started.all()
    assert second.episode_length.tolist() == [5, 5]


def test_an_on_policy_agent_fills_each_slots_column_with_its_own_moves() -> None:
    from coach.agents.clipped_ppo import ClippedPPOAgent, ClippedPPOAgentParameters

    params = ClippedPPOAgentParameters()
    params.memory.rollout_length = 6
    params.algorithm.batch_size = 12
    agent, level = on_turns(ClippedPPOAgent, params, copies=3)
    level.reset(seed=1)
    rollout = fill_block(agent, level)
    assert len(rollout) >= 36 and not rollout.aligned  # 6 moves per slot, over the slots
    c = rollout.columns
    for slot in range(6):
        count = rollout.counts[slot]
        state = c["states"]["observation"][:count, slot]
        following = c["next_states"]["observation"][:count, slot]
        assert (state[:, 0] == state[0, 0]).all() and (state[:, 0] == state[:, 1]).all()
        assert c["states"]["action_mask"][:count, slot].any(axis=1).all()  # its turns only
        # the next step of a slot is the move after its last one: same game, two moves on
        going_on = ~(c["terminated"][: count - 1, slot] | c["truncated"][: count - 1, slot])
        np.testing.assert_array_equal(following[:-1][going_on], state[1:][going_on])
        np.testing.assert_array_equal(state[1:, 2][going_on], state[:-1, 2][going_on] + 2)
    assert agent.train() > 0 and len(rollout) == 0 and agent.training_rounds == 1
    for _ in range(20):  # the next blocks, learned from as they fill
        level.step()
    assert agent.training_rounds >= 2


def test_a_recurrent_agent_carries_each_slots_hidden_state_through_its_own_turns() -> None:
    from coach.agents.clipped_ppo import ClippedPPOAgent, ClippedPPOAgentParameters
    from coach.agents.on_policy import actor_critic_networks
    from coach.core.recurrent_columns import EPISODE_START, hidden_key, next_hidden_key
    from coach.networks import CategoricalPolicyHeadParameters
    from coach.networks.parameters import RecurrentParameters

    params = ClippedPPOAgentParameters()
    params.memory.rollout_length = 8
    params.algorithm.sequence_length = 4
    params.algorithm.batch_size = 16
    params.network_wrappers = actor_critic_networks(
        CategoricalPolicyHeadParameters(), 3e-4, [16], recurrent=RecurrentParameters(size=8)
    )
    agent, level = on_turns(ClippedPPOAgent, params, copies=2)
    level.reset(seed=3)
    rollout = fill_block(agent, level)
    assert not rollout.aligned
    extras = rollout.columns["extras"]
    for name in ("actor", "critic"):
        before, after = extras[hidden_key(name)], extras[next_hidden_key(name)]
        for slot in range(4):
            count = rollout.counts[slot]
            starts = extras[EPISODE_START][:count, slot]
            # a slot's step is decided from the state its own last step left (zeroed where
            # its episode starts), whatever the other slots did in between
            np.testing.assert_array_equal(
                before[1:count, slot][~starts[1:]], after[: count - 1, slot][~starts[1:]]
            )
            assert not before[:count, slot][starts].any()
    sequences = list(rollout.sequence_minibatches(4, 16, [hidden_key("actor")]))
    covered = sum(int(batch.extras["valid"].sum()) for batch in sequences)
    assert covered == len(rollout) and any(not b.extras["valid"].all() for b in sequences)
    assert agent.train() > 0 and agent.training_rounds == 1


def test_a_sequence_replay_keeps_each_slots_own_turns_in_its_sequences() -> None:
    from coach.agents.r2d2 import R2D2Agent, R2D2AgentParameters
    from coach.memories.sequence_replay import SequenceReplayParameters

    params = R2D2AgentParameters()
    params.memory = SequenceReplayParameters(max_size=400, sequence_length=4, overlap=2)
    params.algorithm.batch_size = 4
    params.network_wrappers["main"].middleware.recurrent.size = 8  # type: ignore[union-attr]
    params.network_wrappers["main"].middleware.scheme = [8]
    agent, level = on_turns(R2D2Agent, params, copies=2)
    play_randomly(level, seed=4, steps=30)
    memory = agent.memory
    assert memory.size >= 8 and memory.filled[0].tolist() != [memory.filled[0][0]] * 4
    states = memory.columns[("state", "observation")][: memory.size]  # (sequences, 4, 6)
    for sequence, nxt in zip(states, memory.columns[("next_state", "observation")], strict=False):
        assert (sequence[:, 0] == sequence[0, 0]).all()  # one player's steps
        assert (sequence[:, 0] == sequence[:, 1]).all()  # each at its own turn
        going_on = sequence[1:, 4] == sequence[:-1, 4]  # within one episode: its next turn
        np.testing.assert_array_equal(nxt[:-1][going_on], sequence[1:][going_on])
