"""Atari 2600 games through ale-py, with the conventions of the DQN literature.

An agent step is ``frame_skip`` emulator frames with the same action; the observation is the
pixel-wise maximum of the last two of them (some games draw sprites on alternate frames).
Episodes start with a random number of no-op actions (up to ``noop_max``), and actions are
sticky (repeated with probability ``repeat_action_probability`` instead of the new one, as
Machado et al. 2018 recommend). What a network needs on top of that (84x84 luminance, a
stack of four frames, reward clipping) is the standard input filter,
`coach.filters.atari.atari_input_filter`, one line in a preset.

Mnih et al., "Human-level control through deep reinforcement learning", Nature 2015;
Machado et al., "Revisiting the Arcade Learning Environment", JAIR 2018.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from coach import validation as check
from coach.environments.envpool_environment import (
    EnvpoolTask,
    ale_seed,
    envpool_task_id,
    task_config,
)
from coach.environments.levels import resolve_level
from coach.environments.parameters import GymEnvironmentParameters
from coach.errors import CoachError
from coach.trust import NAMES_CODE


@dataclass(slots=True, kw_only=True)
class AtariEnvironmentParameters(GymEnvironmentParameters):
    """An Atari game: ``level`` is a game of the ``atari`` level set (``breakout``, ``pong``;
    ``coach -l`` presets take it from ``-lvl``)."""

    level: str = field(default="breakout", metadata=NAMES_CODE)
    """The game: a name of the atari level set or an ``ALE/<Game>-v5`` id."""
    level_set: str | None = "atari"
    """The levels ``-lvl`` chooses from."""
    frame_skip: int = 4
    """Emulator frames per agent step (the action repeats; the last two frames are pooled)."""
    noop_max: int = 30
    """An episode starts with 1 to ``noop_max`` no-op actions (0: none)."""
    repeat_action_probability: float = 0.25
    """Sticky actions: the chance that a frame repeats the previous action (0: off)."""
    terminal_on_life_loss: bool = False
    """End an episode at every life lost; the game itself goes on in the next episode."""
    full_action_space: bool = False
    """All 18 joystick actions instead of the game's minimal set."""
    obs_type: str = "grayscale"
    """``grayscale`` (210x160 luminance from ALE itself, the cheapest) or ``rgb``."""
    max_episode_frames: int = 108_000
    """Emulator frames after which an episode is truncated (30 minutes of play)."""

    def validate(self) -> None:
        GymEnvironmentParameters.validate(self)
        check.whole("frame_skip", self.frame_skip, 1)
        check.whole("noop_max", self.noop_max, 0)
        check.number("repeat_action_probability", self.repeat_action_probability, 0, 1)
        check.one_of("obs_type", self.obs_type, ("grayscale", "rgb"))
        check.whole("max_episode_frames", self.max_episode_frames, 1)
        if self.max_episode_steps is not None:  # inherited, but an Atari game counts frames
            raise check.InvalidParameter(
                "max_episode_steps",
                "does not apply to Atari: an episode ends after max_episode_frames emulator "
                "frames (frame skip included); leave it None",
                self.max_episode_steps,
            )

    def make_env(self) -> gym.Env:
        if self.obs_type not in ("grayscale", "rgb"):
            raise CoachError(f"obs_type must be 'grayscale' or 'rgb', got {self.obs_type!r}")
        if self.frame_skip < 1:
            raise CoachError(f"frame_skip must be >= 1, got {self.frame_skip}")
        level = resolve_level("atari", self.level)
        env = gym.make(
            level,
            frameskip=1,
            repeat_action_probability=self.repeat_action_probability,
            full_action_space=self.full_action_space,
            obs_type=self.obs_type,
            max_num_frames_per_episode=self.max_episode_frames,
            render_mode=self.render_mode,
            **self.kwargs,
        )
        return AtariGame(env, self.frame_skip, self.noop_max, self.terminal_on_life_loss)

    def envpool_task(self) -> EnvpoolTask:
        """envpool's game with these conventions, handing over raw 210x160 frames for the
        input filter (`coach.environments.envpool_environment` says where it differs).

        Raises:
            CoachError: for ``noop_max=0`` (envpool always takes a no-op), a render mode
                other than ``rgb_array``, a game or ``kwargs`` envpool lacks, or no envpool.
        """
        if self.noop_max < 1:
            raise CoachError(
                "envpool starts every Atari episode with 1 to noop_max no-ops: noop_max=0 "
                'has no envpool equivalent; set noop_max >= 1 or vectorization="sync"'
            )
        if self.render_mode not in (None, "rgb_array"):
            raise CoachError(
                f"envpool renders Atari as rgb_array frames only, not render_mode="
                f'{self.render_mode!r}; use vectorization="sync" to watch a game'
            )
        task_id = envpool_task_id(self.level, "atari")
        config = {
            "img_height": 210,  # raw frames: Coach's input filter resizes and stacks
            "img_width": 160,
            "stack_num": 1,
            "gray_scale": self.obs_type == "grayscale",
            "frame_skip": self.frame_skip,
            "noop_max": self.noop_max,
            "repeat_action_probability": self.repeat_action_probability,
            "episodic_life": self.terminal_on_life_loss,
            "full_action_space": self.full_action_space,
            "use_fire_reset": False,
            "reward_clip": False,
            "max_episode_steps": max(1, self.max_episode_frames // self.frame_skip),
        }
        config.update(task_config(task_id, dict(self.kwargs), "kwargs"))
        return EnvpoolTask(
            task_id,
            config,
            copy_seed=ale_seed,
            layout="frame" if self.obs_type == "grayscale" else "rgb",
            render_mode=self.render_mode,
        )


class AtariGame(gym.Wrapper):
    """Frame skipping with max-pooling, no-op starts and episodes per life, on an ALE env
    made with ``frameskip=1``.

    The frames are stepped on the emulator directly (``ale.act``): going through the
    gymnasium env for each of the ``frame_skip`` frames would copy a screen per frame.

    Args:
        env: An ale-py environment with ``frameskip=1``.
        frame_skip: Emulator frames per step.
        noop_max: The most no-op actions at the start of a game.
        terminal_on_life_loss: End the episode when a life is lost (the game continues at
            the next reset, which then only takes a no-op step).
    """

    def __init__(
        self,
        env: gym.Env,
        frame_skip: int = 4,
        noop_max: int = 30,
        terminal_on_life_loss: bool = False,
    ) -> None:
        super().__init__(env)
        self.frame_skip = frame_skip
        self.noop_max = noop_max
        self.terminal_on_life_loss = terminal_on_life_loss
        atari = env.unwrapped
        self.ale = atari.ale  # type: ignore[attr-defined]
        self._action_set = atari._action_set  # type: ignore[attr-defined]
        shape = env.observation_space.shape
        assert shape is not None
        self._screens = np.zeros((2, *shape), dtype=np.uint8)
        self._grab = self.ale.getScreenGrayscale if len(shape) == 2 else self.ale.getScreenRGB
        self.lives = 0
        self.game_over = True
        self.life_lost = False
        """The last episode ended at a lost life, not at the game's end: `reset` goes on with
        the game. Any other reset (an evaluation's fresh episodes, say) starts a new game."""

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        ale, screens = self.ale, self._screens
        action_id = self._action_set[action]
        reward = 0.0
        terminated = truncated = False
        for t in range(self.frame_skip):
            reward += ale.act(action_id)
            terminated = ale.game_over(with_truncation=False)
            truncated = ale.game_truncated()
            if terminated or truncated:
                self._grab(screens[0])
                screens[1] = screens[0]
                break
            if t == self.frame_skip - 2:
                self._grab(screens[1])
            elif t == self.frame_skip - 1:
                self._grab(screens[0])
        if self.frame_skip == 1:
            screens[1] = screens[0]
        self.game_over = terminated or truncated
        lives = ale.lives()
        self.life_lost = self.terminal_on_life_loss and lives < self.lives and not self.game_over
        terminated = terminated or self.life_lost
        self.lives = lives
        return np.maximum(screens[0], screens[1]), reward, terminated, truncated, {"lives": lives}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if self.life_lost and seed is None:
            # Only a life was lost: the game goes on, a no-op moves past the lost life.
            observation, *_, info = self.step(0)
            if not self.game_over:
                self.life_lost = False  # a life lost on the no-op ends no episode
                return observation, info
        _, info = self.env.reset(seed=seed, options=options)
        noops = self.env.unwrapped.np_random.integers(1, self.noop_max + 1) if self.noop_max else 0
        for _ in range(noops):
            self.ale.act(self._action_set[0])
            if self.ale.game_over():
                self.env.reset()
        self._grab(self._screens[0])
        self.lives = self.ale.lives()
        self.game_over = self.life_lost = False
        return self._screens[0].copy(), {"lives": self.lives}

    def get_wrapper_state(self) -> dict[str, Any]:
        """What the emulator's state leaves out: the lives seen, whether the game is over and
        whether the last episode ended at a lost life."""
        return {"lives": self.lives, "game_over": self.game_over, "life_lost": self.life_lost}

    def set_wrapper_state(self, state: dict[str, Any]) -> None:
        self.lives = int(state["lives"])
        self.game_over = bool(state["game_over"])
        # A checkpoint from before life_lost was kept: a game left running ended a life.
        lost = self.terminal_on_life_loss and not self.game_over
        self.life_lost = bool(state.get("life_lost", lost))
