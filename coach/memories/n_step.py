"""N-step transitions, built per environment copy before they reach a memory.

For each env the last ``n`` steps wait in a window; the oldest leaves as one transition

    (s_t, a_t, R = r_t + g r_{t+1} + ... + g^{k-1} r_{t+k-1}, s_{t+k}, discount = g^k)

with ``k = n``, or fewer where the episode ended inside the window. A termination ends the
sum and sets ``terminated`` (nothing to bootstrap from); a truncation ends the sum but keeps
``discount = g^k`` with the final observation as ``s_{t+k}``, so the learner still
bootstraps from it. When an episode ends, every step left in its window leaves at once, each
with its shorter return (Sutton and Barto, 2018, ch. 7; Hessel et al., 2018).
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from coach.core.types import Transition

Step = tuple[dict[str, np.ndarray], np.ndarray, float, dict[str, np.ndarray], bool, bool]
"""One env's step: state, action, reward, next state, terminated, truncated."""
Ready = tuple[Step, float, int, Step]
"""A finished n-step transition: its first step, return, length and last step."""


class NStepAccumulator:
    """Turns batches of one-step transitions into n-step ones.

    Args:
        n: The number of steps summed (1 passes transitions through, with ``discount = g``).
        discount: The discount ``g``.
        num_envs: How many env copies' windows to keep.
    """

    def __init__(self, n: int, discount: float, num_envs: int) -> None:
        if n < 1:
            raise ValueError(f"n-step needs n >= 1, got {n}")
        self.n = n
        self.discount = discount
        self.windows: list[deque[Step]] = [deque() for _ in range(num_envs)]

    def add(self, step: Transition, envs: np.ndarray | None = None) -> Transition | None:
        """Take one step of every env (or of the envs ``envs``, row for row); return the
        n-step transitions now complete (``None`` when there are none). The step's rows are
        copied: the caller may reuse its arrays."""
        ready: list[Ready] = []
        terminated, truncated = step.terminated, step.truncated
        windows = self.windows if envs is None else [self.windows[e] for e in envs]
        for i, window in enumerate(windows):
            window.append(
                (
                    {k: np.array(v[i]) for k, v in step.state.items()},
                    np.array(step.action[i]),
                    float(step.reward[i]),
                    {k: np.array(v[i]) for k, v in step.next_state.items()},
                    bool(terminated[i]),
                    bool(truncated[i]),
                )
            )
            if terminated[i] or truncated[i]:
                ready += self._drain(window)
            elif len(window) == self.n:
                ready.append(self._oldest(window))
                window.popleft()
        return self._batch(ready)

    def flush(self) -> Transition | None:
        """Let every waiting step leave, as if its episode were truncated where it stands
        (the environments are being reset, so those episodes stop here)."""
        ready: list[Ready] = []
        for window in self.windows:
            if window:
                last = window[-1]
                window[-1] = (*last[:5], True)  # truncated: bootstrap from its next state
                ready += self._drain(window)
        return self._batch(ready)

    def _oldest(self, window: deque[Step]) -> Ready:
        """The transition from the window's oldest step to its newest."""
        ret = 0.0
        for k, step in enumerate(window):
            ret += self.discount**k * step[2]
        return window[0], ret, len(window), window[-1]

    def _drain(self, window: deque[Step]) -> list[Ready]:
        out = []
        while window:
            out.append(self._oldest(window))
            window.popleft()
        return out

    def _batch(self, ready: list[Ready]) -> Transition | None:
        if not ready:
            return None
        firsts = [first for first, _, _, _ in ready]
        lasts = [last for _, _, _, last in ready]
        return Transition(
            state={k: np.stack([s[0][k] for s in firsts]) for k in firsts[0][0]},
            action=np.stack([s[1] for s in firsts]),
            reward=np.array([ret for _, ret, _, _ in ready], dtype=np.float32),
            next_state={k: np.stack([s[3][k] for s in lasts]) for k in lasts[0][3]},
            terminated=np.array([s[4] for s in lasts], dtype=bool),
            truncated=np.array([s[5] for s in lasts], dtype=bool),
            extras={
                "discount": np.array(
                    [self.discount**length for _, _, length, _ in ready], dtype=np.float32
                )
            },
        )

    def state_dict(self) -> dict[str, Any]:
        return {"windows": [list(window) for window in self.windows]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.windows = [deque(tuple(step) for step in w) for w in state["windows"]]
