"""Ornstein-Uhlenbeck noise on continuous actions (Uhlenbeck & Ornstein, 1930).

The temporally correlated exploration of DDPG (Lillicrap et al., 2016, "Continuous control
with deep reinforcement learning"): each env carries a noise state ``x`` per action
dimension that is pulled back towards ``mu`` and kicked by Gaussian steps,

    x <- x + theta * (mu - x) * dt + sigma * sqrt(dt) * N(0, 1),

and the action taken is ``clip(mu(s) + x)``. Consecutive noises are correlated (lag-1
correlation ``1 - theta * dt``), so an env keeps pushing in one direction for a while, which
explores physical systems with momentum better than independent noise. Its stationary
variance is ``sigma^2 * dt / (1 - (1 - theta * dt)^2)`` (about ``sigma^2 / (2 * theta)``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from gymnasium import spaces

from coach import validation as check
from coach.core.run_phase import RunPhase
from coach.errors import CoachError
from coach.exploration.additive_noise import check_actions
from coach.exploration.exploration_policy import ExplorationPolicy
from coach.schedules import ConstantSchedule, Schedule


@dataclass(slots=True, kw_only=True)
class OUProcessParameters:
    """Ornstein-Uhlenbeck noise, per env, on the policy's actions (DDPG's defaults)."""

    mu: float = 0.0
    """The mean the noise is pulled back to."""
    theta: float = 0.15
    """How strongly the noise is pulled back to ``mu`` (per unit of time)."""
    sigma_schedule: Schedule = field(default_factory=lambda: ConstantSchedule(0.2))
    """The scale of the random kicks as a function of the environment steps taken in
    training."""
    dt: float = 0.01
    """The time one env step stands for."""
    noise_as_percentage_from_action_space: bool = False
    """False (Coach's and DDPG's): the noise is in the action's own units and any Box will
    do, unbounded too. True: it is in units of ``high - low`` (per dimension), which needs
    finite bounds."""

    def validate(self) -> None:
        check.number("mu", self.mu)
        check.number("theta", self.theta, 0)
        check.schedule("sigma_schedule", self.sigma_schedule, 0)
        check.number("dt", self.dt, 0, low_open=True)

    def build(self, action_space: spaces.Space[Any], rng: np.random.Generator) -> OUProcess:
        return OUProcess(
            action_space,
            rng,
            mu=self.mu,
            theta=self.theta,
            sigma_schedule=self.sigma_schedule,
            dt=self.dt,
            noise_as_percentage_from_action_space=self.noise_as_percentage_from_action_space,
        )


class OUProcess(ExplorationPolicy):
    """Adds a per-env Ornstein-Uhlenbeck process to the actions in training.

    The state ``x`` (B, *shape) is allocated at zero on the first training call (and again
    if the number of envs changes), steps once per call in training and heatup, and goes
    back to zero for the envs whose episode ended. Evaluation adds no noise and leaves the
    state alone. The state is part of `state_dict`.

    As in Intel Coach, ``sigma`` and ``mu`` are absolute by default (Coach never scaled them
    by the range), and the state restarts at zero rather than at ``mu``. Unlike Coach, the
    noise is per env rather than one process shared by all, the state also restarts at each
    env's episode end, the result is clipped into the box, and ``sigma`` follows a schedule.

    Args:
        action_space: A ``spaces.Box``; with finite bounds if the noise is relative.
        rng: Generator of the kicks.
        mu: The mean of the process.
        theta: The pull back to the mean, per unit of time.
        sigma_schedule: The scale of the kicks after a number of training env steps.
        dt: The time per env step.
        noise_as_percentage_from_action_space: Whether the process is in units of the range.
    """

    def __init__(
        self,
        action_space: spaces.Space[Any],
        rng: np.random.Generator,
        *,
        mu: float = 0.0,
        theta: float = 0.15,
        sigma_schedule: Schedule | None = None,
        dt: float = 0.01,
        noise_as_percentage_from_action_space: bool = False,
    ) -> None:
        if not isinstance(action_space, spaces.Box):
            raise CoachError(
                f"Ornstein-Uhlenbeck exploration needs a Box (continuous) action space, "
                f"got {action_space}"
            )
        low, high = action_space.low.astype(np.float64), action_space.high.astype(np.float64)
        if noise_as_percentage_from_action_space and not (
            np.all(np.isfinite(low)) and np.all(np.isfinite(high))
        ):
            raise CoachError(
                f"Ornstein-Uhlenbeck noise relative to the action range needs finite bounds, "
                f"got {action_space}; use noise_as_percentage_from_action_space=False"
            )
        super().__init__(action_space, rng)
        self.box = action_space
        self.low, self.high = low, high
        self.mu = mu
        self.theta = theta
        self.sigma_schedule = sigma_schedule or ConstantSchedule(0.2)
        self.dt = dt
        self.noise_as_percentage_from_action_space = noise_as_percentage_from_action_space
        self.scale = high - low if noise_as_percentage_from_action_space else np.ones(low.shape)
        self.state: np.ndarray | None = None
        """The process per env, (B, *shape), in units of ``scale``; None until training."""

    @property
    def sigma(self) -> float:
        return self.sigma_schedule.value(self.steps)

    def get_action(self, action_values: np.ndarray, phase: RunPhase) -> np.ndarray:
        actions = check_actions(action_values, self.box, "Ornstein-Uhlenbeck exploration")
        if phase is not RunPhase.EVALUATE and self.rows is not None:  # some copies
            rows = self.rows
            self._grow(int(rows.max()) + 1 if len(rows) else 0, actions.shape[1:])
            assert self.state is not None
            state = self.state[rows]
            state += self.theta * (self.mu - state) * self.dt
            state += self.sigma * np.sqrt(self.dt) * self.rng.standard_normal(actions.shape)
            self.state[rows] = state
            self.steps += len(actions)
            actions = actions + self.scale * state
        elif phase is not RunPhase.EVALUATE:
            if self.state is None or self.state.shape != actions.shape:
                self.state = np.zeros(actions.shape)
            kicks = self.rng.standard_normal(actions.shape)
            self.state += self.theta * (self.mu - self.state) * self.dt
            self.state += self.sigma * np.sqrt(self.dt) * kicks
            self.steps += len(actions)
            actions = actions + self.scale * self.state
        return np.clip(actions, self.low, self.high).astype(self.box.dtype, copy=False)

    def _grow(self, copies: int, shape: tuple[int, ...]) -> None:
        """A process for at least ``copies`` copies (new ones at zero)."""
        if self.state is None or self.state.shape[1:] != shape:
            self.state = np.zeros((copies, *shape))
        elif len(self.state) < copies:
            self.state = np.concatenate([self.state, np.zeros((copies - len(self.state), *shape))])

    def episode_ended(self, env_mask: np.ndarray) -> None:
        if self.state is not None and len(self.state) == len(env_mask):
            self.state[np.asarray(env_mask, dtype=bool)] = 0.0
        elif self.state is not None and len(self.state) < len(env_mask):  # slots: copies ahead
            self.state[np.asarray(env_mask[: len(self.state)], dtype=bool)] = 0.0

    def values(self) -> dict[str, float]:
        return {"sigma": self.sigma}

    def evaluation_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return self.low, self.high

    def state_dict(self) -> dict[str, Any]:
        state = None if self.state is None else self.state.copy()
        return {"steps": self.steps, "state": state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.steps = int(state["steps"])
        saved = state.get("state")
        self.state = None if saved is None else np.array(saved, dtype=np.float64)
