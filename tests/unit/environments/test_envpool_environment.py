"""Unit tests for coach/environments/envpool_environment.py (``vectorization="envpool"``).

The envpool copies are checked against Coach's own gymnasium path, step for step: for Atari
with ``noop_max=1`` (envpool draws the number of no-ops from its own generator) everything
matches for the same seed and actions, sticky actions included, except the last frame of a
game that ends inside the frame skip; for MuJoCo the reset noise comes from envpool's own
generator, so only noiseless resets can match, and the steps after them agree to rounding.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from coach.environments.atari import AtariEnvironmentParameters
from coach.environments.envpool_environment import EnvpoolEnvironment, envpool_task_id
from coach.environments.levels import levels
from coach.environments.parameters import GymEnvironmentParameters
from coach.errors import CoachError
from coach.graph_managers.parameters import RunContext
from coach.parameters import set_parameter
from coach.presets import load_preset

needs_envpool = pytest.mark.skipif(
    importlib.util.find_spec("envpool") is None, reason="envpool is not installed"
)


def test_without_envpool_the_error_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "envpool", None)  # `import envpool` fails
    parameters = AtariEnvironmentParameters(level="breakout", vectorization="envpool")
    with pytest.raises(CoachError, match=r'pip install "coach\[envpool\]"'):
        parameters.build()


def test_vectorization_is_checked() -> None:
    GymEnvironmentParameters(level="HalfCheetah-v5", vectorization="envpool").validate()
    with pytest.raises(CoachError, match="envpool"):
        GymEnvironmentParameters(level="HalfCheetah-v5", vectorization="threads").validate()


@needs_envpool
@pytest.mark.parametrize(
    ("level", "family", "task"),
    [
        ("ALE/Breakout-v5", "atari", "Breakout-v5"),
        ("breakout", "atari", "Breakout-v5"),
        ("space_invaders", "atari", "SpaceInvaders-v5"),
        ("ALE/MontezumaRevenge-v5", "atari", "MontezumaRevenge-v5"),
        ("HalfCheetah-v5", "mujoco", "HalfCheetah-v5"),
        ("HalfCheetah-v4", "mujoco", "HalfCheetah-v4"),
        ("HalfCheetah-v9", "mujoco", "HalfCheetah-v5"),  # the newest older version
        ("Hopper-v1", "mujoco", "Hopper-v3"),  # none older: the oldest newer one
        ("halfcheetah", "mujoco", "HalfCheetah-v5"),
    ],
)
def test_level_ids_map_to_envpool_tasks(level: str, family: str, task: str) -> None:
    assert envpool_task_id(level, family) == task


@needs_envpool
def test_every_level_of_the_atari_and_mujoco_sets_has_an_envpool_task() -> None:
    for family in ("atari", "mujoco"):
        for gym_id in levels(family).values():
            envpool_task_id(gym_id, family)


@needs_envpool
def test_a_level_envpool_lacks_is_a_one_line_error() -> None:
    with pytest.raises(CoachError, match=r"no atari task 'braekout'; did you mean Breakout"):
        envpool_task_id("braekout", "atari")
    with pytest.raises(CoachError, match="CartPole-v1' is neither"):
        GymEnvironmentParameters(level="CartPole-v1", vectorization="envpool").build()
    with pytest.raises(
        CoachError, match="no mujoco task 'HalfCheeta-v5'; did you mean HalfCheetah"
    ):
        envpool_task_id("HalfCheeta-v5", "mujoco")
    with pytest.raises(CoachError, match="no mujoco level 'halfcheeta'; did you mean halfcheetah"):
        GymEnvironmentParameters(
            level="halfcheeta", level_set="mujoco", vectorization="envpool"
        ).build()


@needs_envpool
def test_options_envpool_cannot_honour_are_errors() -> None:
    with pytest.raises(CoachError, match="noop_max=0 has no envpool equivalent"):
        AtariEnvironmentParameters(noop_max=0, vectorization="envpool").build()
    with pytest.raises(CoachError, match="rgb_array frames only"):
        AtariEnvironmentParameters(render_mode="human", vectorization="envpool").build()
    mujoco = GymEnvironmentParameters(level="Hopper-v5", vectorization="envpool")
    mujoco.render_mode = "rgb_array"
    with pytest.raises(CoachError, match="cannot render MuJoCo"):
        mujoco.build()
    mujoco = GymEnvironmentParameters(
        level="Hopper-v5", vectorization="envpool", kwargs={"healthy_rewrd": 1.0}
    )
    with pytest.raises(CoachError, match=r"has no option healthy_rewrd .*healthy_reward"):
        mujoco.build()


def _run(parameters: GymEnvironmentParameters, seed: int, steps: int) -> list:
    """Every response of ``steps`` random steps from ``reset(seed)`` (actions drawn from
    ``seed``)."""
    environment = parameters.build()
    try:
        responses = [environment.reset(seed)]
        rng = np.random.default_rng(seed)
        for _ in range(steps):
            action = rng.integers(0, environment.action_space.n, size=parameters.num_envs)
            responses.append(environment.step(action))
        responses.append((environment.total_steps, environment.total_episodes))
        return responses
    finally:
        environment.close()


@needs_envpool
@pytest.mark.parametrize(("game", "seed"), [("breakout", 3), ("space_invaders", 0)])
def test_atari_copies_answer_as_the_gymnasium_path_for_the_same_seed(game: str, seed: int) -> None:
    def parameters(vectorization: str) -> AtariEnvironmentParameters:
        return AtariEnvironmentParameters(
            level=game, num_envs=2, noop_max=1, vectorization=vectorization
        )

    envpool_run = _run(parameters("envpool"), seed, 700)
    gym_run = _run(parameters("sync"), seed, 700)
    assert envpool_run[-1] == gym_run[-1]  # env steps and episodes
    assert gym_run[-1][1] >= 2  # the copies played whole games, over resets
    for ours, theirs in zip(envpool_run[:-1], gym_run[:-1], strict=True):
        np.testing.assert_array_equal(
            ours.observation["observation"], theirs.observation["observation"]
        )
        np.testing.assert_array_equal(ours.reward, theirs.reward)
        np.testing.assert_array_equal(ours.terminated, theirs.terminated)
        np.testing.assert_array_equal(ours.truncated, theirs.truncated)
        np.testing.assert_array_equal(ours.episode_started, theirs.episode_started)
        np.testing.assert_array_equal(ours.episode_return, theirs.episode_return)
        np.testing.assert_array_equal(ours.episode_length, theirs.episode_length)
        assert [i["lives"] for i in ours.infos] == [i["lives"] for i in theirs.infos]
        # A game that ends inside the frame skip ends on envpool's previous pooled frame.
        going_on = ~(ours.terminated | ours.truncated)
        np.testing.assert_array_equal(
            ours.next_observation["observation"][going_on],
            theirs.next_observation["observation"][going_on],
        )


@needs_envpool
def test_the_same_seed_gives_the_same_episodes_and_another_seed_others() -> None:
    parameters = AtariEnvironmentParameters(level="pong", num_envs=3, vectorization="envpool")
    first, again, other = (_run(parameters, seed, 50) for seed in (7, 7, 8))
    for a, b in zip(first[:-1], again[:-1], strict=True):
        np.testing.assert_array_equal(a.observation["observation"], b.observation["observation"])
        np.testing.assert_array_equal(a.reward, b.reward)
    frames = [r.observation["observation"] for r in first[:-1]]
    assert any(
        not np.array_equal(f, r.observation["observation"])
        for f, r in zip(frames, other[:-1], strict=True)
    )
    # Within one run the copies are seeded apart too.
    assert any(not np.array_equal(f[0], f[1]) for f in frames)


@needs_envpool
def test_atari_frames_render_as_the_gymnasium_path_renders_them() -> None:
    def rendered(vectorization: str) -> np.ndarray:
        environment = AtariEnvironmentParameters(
            level="breakout", noop_max=1, render_mode="rgb_array", vectorization=vectorization
        ).build()
        try:
            environment.reset(seed=1)
            for action in (1, 2, 3, 0, 2):
                environment.step(np.array([action]))
            return np.asarray(environment.render())
        finally:
            environment.close()

    frame = rendered("envpool")
    assert frame.shape == (210, 160, 3) and frame.dtype == np.uint8
    np.testing.assert_array_equal(frame, rendered("sync"))


@needs_envpool
def test_rgb_atari_frames_are_height_width_channels() -> None:
    environment = AtariEnvironmentParameters(
        level="breakout", obs_type="rgb", noop_max=1, vectorization="envpool"
    ).build()
    reference = AtariEnvironmentParameters(level="breakout", obs_type="rgb", noop_max=1).build()
    try:
        assert environment.observation_space == reference.observation_space
        np.testing.assert_array_equal(
            environment.reset(seed=2).observation["observation"],
            reference.reset(seed=2).observation["observation"],
        )
    finally:
        environment.close()
        reference.close()


@needs_envpool
def test_observations_stay_as_they_were_handed_out() -> None:
    environment = AtariEnvironmentParameters(
        level="breakout", num_envs=2, vectorization="envpool"
    ).build()
    assert isinstance(environment, EnvpoolEnvironment) and environment.fresh_observations
    try:
        kept, copies = [], []
        response = environment.reset(seed=0)
        for t in range(300):
            kept.append(response.observation["observation"])
            copies.append(kept[-1].copy())
            response = environment.step(np.array([t % 4, (t + 1) % 4]))
        for a, b in zip(kept, copies, strict=True):
            np.testing.assert_array_equal(a, b)
    finally:
        environment.close()


@needs_envpool
def test_mujoco_noiseless_resets_match_gymnasium_and_the_first_steps_agree() -> None:
    def run(vectorization: str) -> list[np.ndarray]:
        environment = GymEnvironmentParameters(
            level="halfcheetah",
            level_set="mujoco",
            num_envs=2,
            kwargs={"reset_noise_scale": 0.0},
            vectorization=vectorization,
        ).build()
        try:
            observations = [environment.reset(seed=0).observation["observation"]]
            rng = np.random.default_rng(0)
            for _ in range(5):
                action = rng.uniform(-1, 1, size=(2, 6)).astype(np.float32)
                observations.append(environment.step(action).observation["observation"])
            return observations
        finally:
            environment.close()

    ours, theirs = run("envpool"), run("sync")
    assert ours[0].dtype == theirs[0].dtype == np.float64
    np.testing.assert_array_equal(ours[0], theirs[0])
    for a, b in zip(ours[1:], theirs[1:], strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)


@needs_envpool
def test_mujoco_resets_are_noisy_from_envpools_own_generator() -> None:
    """The same seed gives the same reset, another seed another; the reset noise is drawn by
    envpool, not by gymnasium's generator, so only its size can be compared: positions within
    ``reset_noise_scale`` of the noiseless start."""
    parameters = GymEnvironmentParameters(level="HalfCheetah-v5", num_envs=3)
    reference = parameters.build()
    noiseless = GymEnvironmentParameters(
        level="HalfCheetah-v5", num_envs=3, kwargs={"reset_noise_scale": 0.0}
    ).build()
    parameters.vectorization = "envpool"
    environment = parameters.build()
    try:
        assert environment.observation_space == reference.observation_space
        assert environment.action_space.shape == reference.action_space.shape
        np.testing.assert_array_equal(environment.action_space.low, reference.action_space.low)
        first = environment.reset(seed=4).observation["observation"]
        np.testing.assert_array_equal(first, environment.reset(seed=4).observation["observation"])
        assert not np.array_equal(first, environment.reset(seed=5).observation["observation"])
        start = noiseless.reset(seed=0).observation["observation"]
        positions = slice(0, 8)  # HalfCheetah: qpos[1:], then qvel
        assert np.all(np.abs(first[:, positions] - start[:, positions]) <= 0.1)
        assert not np.array_equal(first[:, positions], start[:, positions])
    finally:
        for env in (environment, reference, noiseless):
            env.close()


@needs_envpool
def test_episodes_end_with_the_time_limit_as_truncations() -> None:
    environment = GymEnvironmentParameters(
        level="HalfCheetah-v5", num_envs=2, max_episode_steps=30, vectorization="envpool"
    ).build()
    try:
        environment.reset(seed=0)
        for t in range(1, 61):
            response = environment.step(np.zeros((2, 6), np.float32))
            ended = t % 30 == 0
            assert list(response.truncated) == [ended, ended]
            assert not response.terminated.any()
            assert list(response.episode_length) == [30 if ended else t % 30] * 2
        assert environment.total_episodes == 4 and environment.total_steps == 120
        assert environment.state_dict() is None
    finally:
        environment.close()


@needs_envpool
@pytest.mark.parametrize("name", ["Atari_DQN", "Mujoco_SAC"])
def test_a_preset_runs_with_envpool(name: str, tmp_path: Path) -> None:
    preset = load_preset(name)
    roots = preset.graph_manager.parameters()
    for path, value in {
        "schedule.heatup_steps": "EnvironmentSteps(300)",
        "schedule.improve_steps": "EnvironmentSteps(200)",
        "schedule.steps_between_evaluation_periods": "EnvironmentSteps(200)",
        "schedule.evaluation_steps": "EnvironmentSteps(200)",
        "environment.vectorization": "'envpool'",
        "agent.memory.max_size": "5000",
    }.items():
        set_parameter(roots, path, value)
    graph = preset.graph_manager.create_graph(
        RunContext(seed=0, experiment_dir=tmp_path, quiet=True)
    )
    try:
        graph.improve()
        agent = graph.top_level.agent
        assert isinstance(graph.top_level.environment, EnvpoolEnvironment)
        assert graph.env_steps == 500 and len(agent.memory) == 500
        assert agent.training_steps > 0 and len(graph.evaluations) == 1
    finally:
        graph.close()
