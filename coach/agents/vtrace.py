"""V-trace (Espeholt et al., 2018, "IMPALA: Scalable Distributed Deep-RL with Importance
Weighted Actor-Learner Architectures", section 4): value targets and policy-gradient
advantages for a block of steps acted by a behaviour policy ``mu`` that may lag the policy
``pi`` being learned.

With ``rho_t = min(rho_bar, pi/mu)``, ``c_t = lambda min(c_bar, pi/mu)`` and the
importance-weighted TD error ``delta_t = rho_t (r_t + gamma V(x_{t+1}) - V(x_t))``, the
n-step target of state ``x_s`` is

    v_s = V(x_s) + sum_{t >= s} gamma^(t-s) (c_s ... c_{t-1}) delta_t,

computed backwards as ``v_s - V(x_s) = delta_s + gamma c_s (v_{s+1} - V(x_{s+1}))``, and the
policy-gradient advantage of step ``s`` is ``min(pg_rho_bar, pi/mu) (r_s + gamma v_{s+1} -
V(x_s))``. Truncating ``rho`` at ``rho_bar`` chooses the value function the targets converge
to (``pi`` itself at ``rho_bar = inf``); truncating ``c`` at ``c_bar`` bounds the variance of
the products, as Retrace does. Where ``pi = mu`` and ``rho_bar, c_bar >= 1``, the targets
are the on-policy n-step returns bootstrapped from the block's end (GAE's returns at the same
lambda).

Episode ends inside the block follow Coach's rule (`coach.memories.rollout`): a terminated
step bootstraps from nothing, a truncated one from the value of its final observation, and
the trace stops at both.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(slots=True, frozen=True)
class VTraceReturns:
    """What `vtrace` gives for a (T, B) block, every tensor detached."""

    targets: torch.Tensor
    """(T, B) ``v_s``, the value targets."""
    advantages: torch.Tensor
    """(T, B) the policy-gradient advantages, ``rho_s^pg (r_s + gamma v_{s+1} - V(x_s))``."""
    clipped_rhos: torch.Tensor
    """(T, B) ``min(rho_bar, pi/mu)``, the importance weights of the TD errors."""


def vtrace(
    log_rhos: torch.Tensor,
    rewards: torch.Tensor,
    values: torch.Tensor,
    next_values: torch.Tensor,
    terminated: torch.Tensor,
    truncated: torch.Tensor,
    discount: float,
    rho_bar: float = 1.0,
    c_bar: float = 1.0,
    pg_rho_bar: float | None = None,
    trace_lambda: float = 1.0,
    valid: torch.Tensor | None = None,
) -> VTraceReturns:
    """V-trace targets and policy-gradient advantages over a block, time-major.

    Args:
        log_rhos: (T, B) ``log pi(a_t|x_t) - log mu(a_t|x_t)``: the policy learned against
            the one that acted.
        rewards: (T, B) rewards.
        values: (T, B) V(x_t) of the stored states, by the current value function.
        next_values: (T, B) V of each step's true successor: the next row's state while the
            episode goes on and the state after the block's last step there, the final
            observation where the episode was truncated (not read where it terminated).
        terminated: (T, B) the step ended the episode in a terminal state (no bootstrap).
        truncated: (T, B) the step's episode was cut (bootstrap, but the trace stops).
        discount: gamma.
        rho_bar: The truncation of the TD errors' importance weights (the paper's 1).
        c_bar: The truncation of the trace coefficients (the paper's 1).
        pg_rho_bar: The truncation of the policy gradient's weights (``None``: ``rho_bar``).
        trace_lambda: lambda, a further discount of the trace (the paper's 1).
        valid: (T, B) the cells that hold a step, each column's first ones (``None``: all);
            the others get nothing and stop the trace.

    Returns:
        The targets, the advantages and the clipped importance weights (`VTraceReturns`).
    """
    with torch.no_grad():  # the targets and advantages are constants of the losses
        rhos = log_rhos.exp()
        clipped = rhos.clamp(max=rho_bar)
        pg_rhos = rhos.clamp(max=rho_bar if pg_rho_bar is None else pg_rho_bar)
        traces = trace_lambda * rhos.clamp(max=c_bar)
        ended = terminated.bool()
        holds = torch.ones_like(ended) if valid is None else valid.bool()
        # The next row holds the step after this one, of the same episode.
        goes_on = ~(ended | truncated.bool())
        goes_on[-1] = False
        goes_on[:-1] &= holds[1:]
        bootstrap = torch.where(ended, 0.0, discount * next_values)
        deltas = torch.where(holds, clipped * (rewards + bootstrap - values), 0.0)
        corrections = torch.zeros_like(deltas)
        running = torch.zeros_like(deltas[0])
        for t in range(len(deltas) - 1, -1, -1):  # vectorized over the columns
            running = deltas[t] + discount * traces[t] * goes_on[t] * running
            corrections[t] = running
        targets = values + corrections
        # The target of each step's successor: the next row's while the episode goes on in
        # the block, else the successor's value (the bootstrap after a column's last step).
        following = torch.cat([targets[1:], next_values[-1:]])
        successor = torch.where(goes_on, following, next_values)
        advantages = pg_rhos * (rewards + torch.where(ended, 0.0, discount * successor) - values)
        advantages = torch.where(holds, advantages, 0.0)
    return VTraceReturns(targets=targets, advantages=advantages, clipped_rhos=clipped)
