"""Unit tests for the PettingZoo adapters (coach/environments/pettingzoo_*.py).

The expectations are computed by hand from the scripted environments of
``tests.multi_agent_envs``: `LeavingParallelEnv` (id ``k``'s observation ``[k, t, episode,
u]``, reward ``100 a + 10 k + t``, ``agent_2`` leaves at step 2, the others are truncated at
step 5) and `TurnTakingAECEnv` (two players add 0, 1 or 2 to a total; a move of ``a`` pays
the mover ``+a`` and the other ``-a``, the winning move ``+10`` / ``-10`` more).
"""

from __future__ import annotations

import io
import sys
from typing import Any

import numpy as np
import pytest
import torch
from gymnasium import spaces

from coach.checkpoints import pack, unpack
from coach.environments.multi_agent import MultiAgentResponse
from coach.environments.pettingzoo_environment import (
    AECPettingZooEnvironment,
    ParallelPettingZooEnvironment,
    PettingZooEnvironment,
    PettingZooEnvironmentParameters,
)
from coach.errors import CoachError
from coach.validation import InvalidParameter
from tests.multi_agent_envs import LeavingParallelEnv

LEAVING = "tests.multi_agent_envs:LeavingParallelEnv"
TURNS = "tests.multi_agent_envs:TurnTakingAECEnv"
IDS = ("agent_0", "agent_1", "agent_2")
P0, P1 = "player_0", "player_1"


def _build(env: str, num_envs: int = 1, **kwargs: Any) -> PettingZooEnvironment:
    params = PettingZooEnvironmentParameters(env=env, num_envs=num_envs, **kwargs)
    params.validate()
    built = params.build()
    assert isinstance(built, PettingZooEnvironment)
    return built


def _actions(env: PettingZooEnvironment, **values: int) -> dict[str, np.ndarray]:
    """Every id's action in every copy: ``values[id]``, 0 where not given."""
    return {i: np.full(env.num_envs, values.get(i, 0), dtype=np.int64) for i in env.agent_ids}


def _seen(response: MultiAgentResponse, agent_id: str, next_observation: bool = False) -> Any:
    """The scripted part of an id's observations (without the seeded draw), per copy."""
    part = response.responses[agent_id]
    observation = part.next_observation if next_observation else part.observation
    return observation["observation"][:, :-1].tolist()


def _through_checkpoint(state: dict[str, Any]) -> dict[str, Any]:
    """``state`` as a checkpoint file gives it back (`torch.load` with ``weights_only``)."""
    buffer = io.BytesIO()
    torch.save(pack(state), buffer)
    buffer.seek(0)
    loaded: dict[str, Any] = unpack(torch.load(buffer, weights_only=True))
    return loaded


def _assert_same(a: MultiAgentResponse, b: MultiAgentResponse) -> None:
    np.testing.assert_array_equal(a.copy_done, b.copy_done)
    np.testing.assert_array_equal(a.copy_return, b.copy_return)
    np.testing.assert_array_equal(a.copy_length, b.copy_length)
    for agent_id, first in a.responses.items():
        second = b.responses[agent_id]
        np.testing.assert_array_equal(a.acting[agent_id], b.acting[agent_id])
        np.testing.assert_array_equal(a.outcome[agent_id], b.outcome[agent_id])
        for name in ("reward", "terminated", "truncated", "episode_started"):
            np.testing.assert_array_equal(getattr(first, name), getattr(second, name))
        for name in ("episode_return", "episode_length"):
            np.testing.assert_array_equal(getattr(first, name), getattr(second, name))
        for key in first.observation:
            np.testing.assert_array_equal(first.observation[key], second.observation[key])
            np.testing.assert_array_equal(first.next_observation[key], second.next_observation[key])


def _masked_actions(
    env: PettingZooEnvironment, response: MultiAgentResponse, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """A random legal action per id and copy (any action where no mask says otherwise)."""
    actions = {}
    for agent_id in env.agent_ids:
        space = env.action_spaces[agent_id]
        assert isinstance(space, spaces.Discrete)
        masks = response.responses[agent_id].observation.get("action_mask")
        row_actions = np.zeros(env.num_envs, dtype=np.int64)
        for copy in range(env.num_envs):
            legal = np.arange(int(space.n))
            if masks is not None and masks[copy].any():
                legal = np.flatnonzero(masks[copy])
            row_actions[copy] = rng.choice(legal)
        actions[agent_id] = row_actions
    return actions


# -- the parallel API ------------------------------------------------------------------------


def test_parallel_spaces_add_the_info_mask_to_a_flat_observation() -> None:
    env = _build(LEAVING)
    assert isinstance(env, ParallelPettingZooEnvironment)
    assert not env.turn_based
    assert env.agent_ids == IDS
    for agent_id in IDS:
        space = env.observation_spaces[agent_id]
        assert sorted(space.spaces) == ["action_mask", "observation"]
        assert space["observation"].shape == (4,)
        assert space["action_mask"] == spaces.Box(0, 1, shape=(3,), dtype=np.int8)
        assert env.action_spaces[agent_id] == spaces.Discrete(3)


@pytest.mark.parametrize("num_envs", [1, 3])
def test_parallel_reset_every_id_decides(num_envs: int) -> None:
    env = _build(LEAVING, num_envs)
    response = env.reset(seed=0)
    assert response.num_envs == num_envs
    assert not response.copy_done.any()
    for k, agent_id in enumerate(IDS):
        part = response.responses[agent_id]
        assert response.acting[agent_id].tolist() == [True] * num_envs
        assert response.outcome[agent_id].tolist() == [False] * num_envs
        assert part.episode_started.tolist() == [True] * num_envs
        assert _seen(response, agent_id) == [[k, 0, 0]] * num_envs
        assert part.observation["action_mask"].tolist() == [[1, 1, 1]] * num_envs
        assert part.observation["observation"].dtype == np.float32
        assert part.observation["action_mask"].dtype == np.int8


@pytest.mark.parametrize("num_envs", [1, 3])
def test_parallel_step_routes_each_ids_action_and_outcome(num_envs: int) -> None:
    env = _build(LEAVING, num_envs)
    env.reset(seed=0)
    actions = _actions(env, agent_0=1, agent_2=2)
    actions["agent_1"][-1] = 1  # the last copy's agent_1 moves otherwise

    response = env.step(actions)

    expected_rewards = {
        "agent_0": [101.0] * num_envs,
        "agent_1": [11.0] * (num_envs - 1) + [111.0],
        "agent_2": [221.0] * num_envs,
    }
    for k, agent_id in enumerate(IDS):
        part = response.responses[agent_id]
        assert part.reward.tolist() == expected_rewards[agent_id]
        assert part.reward.dtype == np.float32
        assert response.acting[agent_id].all() and response.outcome[agent_id].all()
        assert not (part.terminated.any() or part.truncated.any() or part.episode_started.any())
        assert _seen(response, agent_id) == [[k, 1, 0]] * num_envs
        assert _seen(response, agent_id, next_observation=True) == [[k, 1, 0]] * num_envs
        assert part.observation["action_mask"].tolist() == [[1, 1, 0]] * num_envs  # odd step
        assert part.episode_return.tolist() == expected_rewards[agent_id]
        assert part.episode_return.dtype == np.float64
        assert part.episode_length.tolist() == [1] * num_envs
        assert part.episode_length.dtype == np.int64
    assert response.copy_return.tolist() == [
        sum(expected_rewards[i][c] for i in IDS) for c in range(num_envs)
    ]
    assert response.copy_length.tolist() == [1] * num_envs


@pytest.mark.parametrize("num_envs", [1, 3])
def test_parallel_leaving_id_gets_its_terminal_outcome_then_no_decisions(num_envs: int) -> None:
    env = _build(LEAVING, num_envs)
    env.reset(seed=0)
    env.step(_actions(env))
    response = env.step(_actions(env))  # step 2: agent_2 leaves

    leaving = response.responses["agent_2"]
    assert response.outcome["agent_2"].all()
    assert not response.acting["agent_2"].any()
    assert leaving.terminated.all() and not leaving.truncated.any()
    assert leaving.reward.tolist() == [22.0] * num_envs
    assert _seen(response, "agent_2", next_observation=True) == [[2, 2, 0]] * num_envs
    assert leaving.episode_return.tolist() == [21.0 + 22.0] * num_envs
    assert leaving.episode_length.tolist() == [2] * num_envs
    assert response.acting["agent_0"].all() and response.acting["agent_1"].all()
    assert not response.copy_done.any()

    gone = _actions(env)
    gone["agent_2"][:] = 99  # read, it would be out of the action space
    for _ in range(2):  # steps 3 and 4
        response = env.step(gone)
        assert not response.acting["agent_2"].any()
        assert not response.outcome["agent_2"].any()
        assert response.outcome["agent_0"].all()


@pytest.mark.parametrize("num_envs", [1, 3])
def test_parallel_copy_resets_in_the_step_its_last_ids_leave(num_envs: int) -> None:
    env = _build(LEAVING, num_envs)
    env.reset(seed=0)
    for _ in range(4):
        env.step(_actions(env))
    response = env.step(_actions(env))  # step 5: agent_0 and agent_1 are truncated

    assert response.copy_done.tolist() == [True] * num_envs
    assert response.copy_return.tolist() == [15.0 + 65.0 + 43.0] * num_envs
    assert response.copy_length.tolist() == [5] * num_envs
    for k, agent_id in enumerate(("agent_0", "agent_1")):
        part = response.responses[agent_id]
        assert response.outcome[agent_id].all()
        assert part.truncated.all() and not part.terminated.any()
        assert part.reward.tolist() == [10.0 * k + 5] * num_envs
        assert _seen(response, agent_id, next_observation=True) == [[k, 5, 0]] * num_envs
        assert part.episode_return.tolist() == [[15.0, 65.0][k]] * num_envs
        assert part.episode_length.tolist() == [5] * num_envs
    assert not response.outcome["agent_2"].any()
    for k, agent_id in enumerate(IDS):  # the new episode's first decisions, in the response
        part = response.responses[agent_id]
        assert response.acting[agent_id].all() and part.episode_started.all()
        assert _seen(response, agent_id) == [[k, 0, 1]] * num_envs
    assert env.total_steps == 5 * num_envs
    assert env.total_episodes == num_envs

    response = env.step(_actions(env))
    assert response.copy_return.tolist() == [1.0 + 11.0 + 21.0] * num_envs
    assert response.responses["agent_1"].episode_return.tolist() == [11.0] * num_envs
    assert response.responses["agent_1"].episode_length.tolist() == [1] * num_envs


def test_parallel_seeding_copy_i_with_seed_plus_i_then_unseeded_resets() -> None:
    first, second, shifted = _build(LEAVING, 3), _build(LEAVING, 3), _build(LEAVING, 1)
    a, b, c = first.reset(seed=7), second.reset(seed=7), shifted.reset(seed=8)
    for agent_id in IDS:
        draws = a.responses[agent_id].observation["observation"][:, 3]
        assert draws.tolist() == b.responses[agent_id].observation["observation"][:, 3].tolist()
        assert draws[1] == c.responses[agent_id].observation["observation"][0, 3]
        assert len(set(draws.tolist())) == 3
    # The second episode goes on with each copy's own generator, unseeded.
    bare = LeavingParallelEnv()
    bare.reset(seed=7)
    for _ in range(5):
        bare.step({i: 0 for i in bare.agents})
    expected, _ = bare.reset()
    for _ in range(5):
        response = first.step(_actions(first))
    for agent_id in IDS:
        draw = response.responses[agent_id].observation["observation"][0, 3]
        assert draw == expected[agent_id][3]


def test_seeded_reset_seeds_each_ids_action_space_apart() -> None:
    first, second = _build(LEAVING), _build(LEAVING)
    first.reset(seed=3)
    second.reset(seed=3)
    samples = {i: [first.action_spaces[i].sample() for _ in range(30)] for i in IDS}
    assert samples == {i: [second.action_spaces[i].sample() for _ in range(30)] for i in IDS}
    assert samples["agent_0"] != samples["agent_1"]


# -- the AEC API ----------------------------------------------------------------------------


def test_aec_spaces_keep_a_dict_observation_with_its_mask() -> None:
    env = _build(TURNS)
    assert isinstance(env, AECPettingZooEnvironment)
    assert env.turn_based
    assert env.agent_ids == (P0, P1)
    assert sorted(env.observation_spaces[P0].spaces) == ["action_mask", "observation"]


@pytest.mark.parametrize("num_envs", [1, 3])
def test_aec_turn_order_summed_rewards_and_the_end_of_a_game(num_envs: int) -> None:
    env = _build(TURNS, num_envs)
    response = env.reset(seed=0)
    assert response.acting[P0].all() and not response.acting[P1].any()
    assert response.responses[P0].episode_started.all()
    assert _seen(response, P0) == [[0, 0, 0, 0, 0]] * num_envs
    assert response.responses[P0].observation["action_mask"].tolist() == [[1, 1, 1]] * num_envs

    response = env.step(_actions(env, player_0=1, player_1=99))  # not player_1's turn
    assert response.acting[P1].all() and not response.acting[P0].any()
    assert response.responses[P1].episode_started.all()
    assert not response.outcome[P0].any() and not response.outcome[P1].any()
    assert _seen(response, P1) == [[1, 1, 1, 1, 0]] * num_envs
    assert response.responses[P1].episode_return.tolist() == [-1.0] * num_envs

    response = env.step(_actions(env, player_0=99, player_1=2))
    p0 = response.responses[P0]
    assert response.acting[P0].all() and response.outcome[P0].all()
    assert not p0.episode_started.any()
    assert p0.reward.tolist() == [1.0 - 2.0] * num_envs  # its own move, then player_1's
    assert _seen(response, P0, next_observation=True) == [[0, 0, 2, 3, 0]] * num_envs
    assert _seen(response, P0) == [[0, 0, 2, 3, 0]] * num_envs

    response = env.step(_actions(env, player_0=1))  # total 4: player_0 wins
    p0, p1 = response.responses[P0], response.responses[P1]
    assert response.copy_done.all()
    assert response.outcome[P0].all() and response.outcome[P1].all()
    assert p0.terminated.all() and p1.terminated.all()
    assert p0.reward.tolist() == [11.0] * num_envs
    assert p1.reward.tolist() == [2.0 - 11.0] * num_envs
    assert _seen(response, P0, next_observation=True) == [[0, 0, 3, 4, 0]] * num_envs
    assert _seen(response, P1, next_observation=True) == [[1, 1, 3, 4, 0]] * num_envs
    assert p0.episode_return.tolist() == [10.0] * num_envs
    assert p1.episode_return.tolist() == [-10.0] * num_envs
    assert p0.episode_length.tolist() == [2] * num_envs
    assert p1.episode_length.tolist() == [1] * num_envs
    assert response.copy_return.tolist() == [0.0] * num_envs
    assert response.copy_length.tolist() == [3] * num_envs
    # The next game's first decision is in the same response.
    assert response.acting[P0].all() and not response.acting[P1].any()
    assert p0.episode_started.all()
    assert _seen(response, P0) == [[0, 0, 0, 0, 1]] * num_envs
    assert env.total_steps == 3 * num_envs
    assert env.total_episodes == num_envs


def test_aec_copies_end_their_games_apart() -> None:
    env = _build(TURNS, 3)
    env.reset(seed=0)
    # The moves of each copy, whoever's turn it is: copy 0's player_0 wins at step 3, copy
    # 1's player_1 at step 2, copy 2 is truncated after six moves.
    moves = [[1, 2, 1, 1, 1, 1], [2, 2, 1, 0, 1, 0], [1, 0, 1, 0, 1, 0]]
    done = []
    for step in range(6):
        move = np.array([copy_moves[step] for copy_moves in moves], dtype=np.int64)
        response = env.step({P0: move, P1: move})
        done.append(response.copy_done.tolist())
        for copy in range(3):  # exactly one id decides in every copy
            assert sum(bool(response.acting[i][copy]) for i in env.agent_ids) == 1
        p0, p1 = response.responses[P0], response.responses[P1]
        if step == 1:  # copy 1: player_1 wins with its first move
            assert p0.terminated[1] and p0.reward[1] == 2.0 - 12.0
            assert p0.episode_return[1] == -10.0
            assert p1.terminated[1] and p1.reward[1] == 12.0
            assert p1.episode_return[1] == -2.0 + 12.0  # with the reward before its move
            assert response.acting[P0][1] and p0.episode_started[1]
    assert done == [
        [False, False, False],
        [False, True, False],
        [True, False, False],
        [False, False, False],
        [False, False, False],
        [False, False, True],
    ]
    assert p0.truncated[2] and p1.truncated[2] and not p0.terminated[2]
    assert p0.reward[2] == 1.0 - 0.0  # its last move, then player_1's pass
    assert p1.reward[2] == 0.0
    assert p0.episode_return[2] == 3.0 and p1.episode_return[2] == -3.0
    assert response.copy_length[2] == 6 and response.copy_return[2] == 0.0
    assert env.total_episodes == 3
    assert env.total_steps == 18


def test_aec_rewards_count_when_read_and_before_a_first_move_with_no_outcome() -> None:
    env = _build(TURNS)
    env.reset(seed=0)
    response = env.step(_actions(env, player_0=2))
    assert not response.outcome[P1].any()
    assert response.responses[P1].episode_return.tolist() == [-2.0]
    # player_0's +2 is read at its next turn: the copy's return is its ids' so far.
    assert response.responses[P0].episode_return.tolist() == [0.0]
    assert response.copy_return.tolist() == [-2.0]
    response = env.step(_actions(env, player_1=1))
    assert response.responses[P0].episode_return.tolist() == [2.0 - 1.0]
    assert response.copy_return.tolist() == [-2.0 + 1.0]


# -- seeding, saving, restoring -------------------------------------------------------------


def _run(
    env: PettingZooEnvironment, response: MultiAgentResponse, steps: int, seed: int
) -> tuple[list[MultiAgentResponse], list[dict[str, np.ndarray]]]:
    rng = np.random.default_rng(seed)
    responses, actions = [], []
    for _ in range(steps):
        step_actions = _masked_actions(env, response, rng)
        response = env.step(step_actions)
        responses.append(response)
        actions.append(step_actions)
    return responses, actions


@pytest.mark.parametrize(
    ("name", "kwargs", "num_envs", "before", "after"),
    [
        (LEAVING, {}, 3, 3, 12),
        (TURNS, {}, 3, 2, 15),
        ("mpe2:simple_spread_v3", {"N": 3, "max_cycles": 25}, 2, 10, 40),
        ("pettingzoo.classic:tictactoe_v3", {}, 2, 3, 30),
    ],
)
def test_state_dict_round_trip_mid_episode_continues_exactly(
    name: str, kwargs: dict[str, Any], num_envs: int, before: int, after: int
) -> None:
    original = _build(name, num_envs, kwargs=kwargs)
    response = original.reset(seed=5)
    rng = np.random.default_rng(1)
    for _ in range(before):
        response = original.step(_masked_actions(original, response, rng))
    state = original.state_dict()
    assert state is not None
    state = _through_checkpoint(state)
    expected, actions = _run(original, response, after, seed=2)
    samples = {i: original.action_spaces[i].sample() for i in original.agent_ids}

    restored = _build(name, num_envs, kwargs=kwargs)
    restored.load_state_dict(state)
    for step_actions, want in zip(actions, expected, strict=True):
        _assert_same(restored.step(step_actions), want)
    assert restored.total_steps == original.total_steps
    assert restored.total_episodes == original.total_episodes
    assert samples == {i: restored.action_spaces[i].sample() for i in restored.agent_ids}


def test_load_state_dict_of_another_environment_raises() -> None:
    state = _build(LEAVING).state_dict()
    assert state is not None
    with pytest.raises(CoachError, match="agents"):
        _build(TURNS).load_state_dict(state)
    with pytest.raises(CoachError, match="num_envs=1"):
        _build(LEAVING, 2).load_state_dict(state)


# -- real environments ----------------------------------------------------------------------


def test_simple_spread_random_steps() -> None:
    env = _build("mpe2:simple_spread_v3", 2, kwargs={"N": 3, "max_cycles": 25})
    assert isinstance(env, ParallelPettingZooEnvironment)
    assert env.observation_spaces["agent_0"]["observation"].shape == (18,)
    response = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for step in range(1, 301):
        response = env.step(_masked_actions(env, response, rng))
        for agent_id in env.agent_ids:
            assert response.acting[agent_id].all() and response.outcome[agent_id].all()
            part = response.responses[agent_id]
            assert part.observation["observation"].shape == (2, 18)
            assert part.truncated.tolist() == [step % 25 == 0] * 2
        assert response.copy_done.tolist() == [step % 25 == 0] * 2
        if step % 25 == 0:
            assert response.copy_length.tolist() == [25, 25]
            team = sum(response.responses[i].episode_return for i in env.agent_ids)
            np.testing.assert_allclose(response.copy_return, team, rtol=1e-5)
    assert env.total_steps == 600
    assert env.total_episodes == 24


def test_tictactoe_random_masked_steps() -> None:
    env = _build("pettingzoo.classic:tictactoe_v3", 2)
    assert isinstance(env, AECPettingZooEnvironment)
    response = env.reset(seed=0)
    rng = np.random.default_rng(0)
    games = 0
    for _ in range(300):
        response = env.step(_masked_actions(env, response, rng))
        for copy in range(2):
            deciding = [i for i in env.agent_ids if response.acting[i][copy]]
            assert len(deciding) == 1
            mask = response.responses[deciding[0]].observation["action_mask"][copy]
            assert mask.any()
            if response.copy_done[copy]:
                games += 1
                returns = [response.responses[i].episode_return[copy] for i in env.agent_ids]
                assert sum(returns) == 0.0 and set(returns) <= {-1.0, 0.0, 1.0}
                assert 5 <= response.copy_length[copy] <= 9
                assert response.copy_return[copy] == 0.0
    assert games == env.total_episodes > 40
    assert env.total_steps == 600


# -- loading --------------------------------------------------------------------------------


def test_a_parallel_environment_through_the_aec_api() -> None:
    env = _build(LEAVING, api="aec")
    assert isinstance(env, AECPettingZooEnvironment)
    response = env.reset(seed=0)
    assert [response.acting[i][0] for i in IDS] == [True, False, False]


@pytest.mark.parametrize(
    ("name", "kwargs", "api", "message"),
    [
        ("no_such_module:thing", {}, "auto", "cannot load environment 'no_such_module:thing'"),
        ("mpe2:no_such_env_v0", {}, "auto", "mpe2 has no 'no_such_env_v0'"),
        ("mpe2:simple_spread_v3", {"no_such_kwarg": 1}, "auto", "cannot make environment"),
        ("pettingzoo.classic:tictactoe_v3", {}, "parallel", "api='aec' would use its env()"),
        ("numpy:pi", {}, "auto", "neither an environment module nor a callable"),
        ("builtins:dict", {}, "auto", "made a dict, not a PettingZoo ParallelEnv or AECEnv"),
    ],
)
def test_unknown_or_unmakeable_environment_raises(
    name: str, kwargs: dict[str, Any], api: str, message: str
) -> None:
    with pytest.raises(CoachError, match=message):
        _build(name, kwargs=kwargs, api=api)


@pytest.mark.parametrize(
    ("field", "value"),
    [("env", "mpe2"), ("env", ""), ("num_envs", 0), ("api", "turns"), ("observation_key", "")],
)
def test_validate_names_the_wrong_field(field: str, value: Any) -> None:
    params = PettingZooEnvironmentParameters(env="mpe2:simple_spread_v3")
    setattr(params, field, value)
    with pytest.raises(InvalidParameter, match=field):
        params.validate()


def test_num_envs_below_one_raises() -> None:
    params = PettingZooEnvironmentParameters(env=LEAVING)
    with pytest.raises(CoachError, match="num_envs"):
        ParallelPettingZooEnvironment(params.make_env, num_envs=0)


def test_without_pettingzoo_the_error_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pettingzoo", None)  # import pettingzoo fails
    with pytest.raises(CoachError, match=r"pip install coach\[multiagent\]"):
        _build(LEAVING)


# -- rendering ------------------------------------------------------------------------------


def test_render_gives_copy_0s_frame_and_rendering_is_left_out_of_the_state() -> None:
    env = _build("mpe2:simple_spread_v3", 2, kwargs={"render_mode": "rgb_array"})
    env.reset(seed=0)
    frame = env.render()
    assert isinstance(frame, np.ndarray) and frame.ndim == 3 and frame.shape[2] == 3
    assert env.state_dict() is not None  # the pygame surface is no part of the episode
    assert _build(LEAVING).render() is None  # made without a render mode
    env.close()
