"""Generalized advantage estimation (GAE) over a block of steps, vectorized over its
columns: the returns and advantages on-policy agents learn from (`coach.memories.rollout`)."""

from __future__ import annotations

import numpy as np


def generalized_advantages(
    rewards: np.ndarray,
    values: np.ndarray,
    next_values: np.ndarray,
    terminated: np.ndarray,
    truncated: np.ndarray,
    discount: float,
    gae_lambda: float,
    valid: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """GAE(lambda) advantages and the matching returns (Schulman et al., 2016).

    Args:
        rewards: (T, B) rewards.
        values: (T, B) V(s_t).
        next_values: (T, B) V(s_{t+1}) of each step's true successor (the final observation's
            value where the episode ended).
        terminated: (T, B) the step ended the episode in a terminal state (no bootstrap).
        truncated: (T, B) the step's episode was cut (bootstrap, but the trace stops).
        discount: gamma.
        gae_lambda: lambda; 1 gives Monte Carlo advantages, 0 one-step TD errors.
        valid: (T, B) the cells that hold a step, each column's first ones (``None``: all);
            the others get no advantage and stop the trace.

    Returns:
        ``(advantages, returns)``, each (T, B), with ``returns = advantages + values``.
    """
    not_terminal = 1.0 - terminated.astype(np.float64)
    continues = 1.0 - (terminated | truncated).astype(np.float64)
    deltas = rewards + discount * not_terminal * next_values - values
    if valid is not None:
        deltas = np.where(valid, deltas, 0.0)
        continues = np.where(valid, continues, 0.0)
    advantages = np.zeros_like(deltas, dtype=np.float64)
    running = np.zeros(deltas.shape[1], dtype=np.float64)
    for t in range(len(deltas) - 1, -1, -1):  # vectorized over the slots
        running = deltas[t] + discount * gae_lambda * continues[t] * running
        advantages[t] = running
    return advantages, advantages + values
