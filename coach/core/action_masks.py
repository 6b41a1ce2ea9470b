"""Action masks: which of an agent's discrete actions are legal in each state.

Games (PettingZoo's, for one) give each agent an ``action_mask`` with its observation, a
(A,) 0/1 array over its A discrete actions. Coach keeps it as one more key of the observation
dict, `ACTION_MASK`, of shape (B, A) over the env copies; memories store it like any other
key, so a sampled batch has it in ``states`` and ``next_states``. Networks do not read it
unless a preset gives it an input embedder. What reads it:

- acting: heatup draws uniformly among each row's legal actions (`legal_random_actions`); a
  Q policy gives the illegal actions the value -inf before its exploration, which picks its
  random actions among the actions of finite value only; a categorical policy's illegal
  logits are `MASKED_FILL`;
- learning: a bootstrap takes its max or argmax over the legal next actions only, and an
  on-policy learner's log-probabilities and entropy are those of the masked distribution.

A row with no legal action at all (a finished game's last state, a copy the agent does not
act in) is not constrained: every action counts as legal there. Its action is never taken and
a terminal next state's value never used, but maxima, argmaxes and targets stay finite.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from coach.errors import CoachError

ACTION_MASK = "action_mask"
"""The observation key of the action mask: (B, A), nonzero where an action is legal."""

MASKED_FILL = -1e9
"""What the Q-values and logits of illegal actions become in learning and in a categorical
policy: far below anything a network gives, so that a max, an argmax or a softmax passes
them over (a softmax gives them probability 0 exactly), and finite, so that a product with 0
stays 0 (an entropy's p log p, a bootstrap that a terminal row drops)."""


def has_action_mask(
    observation_space: spaces.Space[Any] | None, action_space: spaces.Space[Any]
) -> bool:
    """Whether an agent's observations carry an action mask that fits its actions.

    Args:
        observation_space: The agent's (filtered) observation space, a ``spaces.Dict``.
        action_space: The agent's action space.

    Raises:
        CoachError: The observations have an `ACTION_MASK` but the action space is not
            ``Discrete``, or the mask's shape is not (number of actions,).
    """
    if (
        not isinstance(observation_space, spaces.Dict)
        or ACTION_MASK not in observation_space.spaces
    ):
        return False
    shape = observation_space.spaces[ACTION_MASK].shape
    if not isinstance(action_space, spaces.Discrete):
        raise CoachError(
            f"the observations have an {ACTION_MASK!r} of shape {shape}, but the action space "
            f"{action_space} (shape {action_space.shape}) is not Discrete: an action mask needs "
            f"a Discrete action space"
        )
    if shape != (int(action_space.n),):
        raise CoachError(
            f"the observations' {ACTION_MASK!r} has shape {shape}, but the action space "
            f"{action_space} has {int(action_space.n)} actions: the mask needs shape "
            f"({int(action_space.n)},), one entry per action"
        )
    return True


def legal_actions(mask: np.ndarray) -> np.ndarray:
    """The legal actions of a batch of masks (..., A) as booleans; a row with none has all."""
    legal = np.asarray(mask).astype(bool, copy=False)
    empty = ~legal.any(axis=-1, keepdims=True)
    return legal | empty if empty.any() else legal


def legal_actions_tensor(mask: torch.Tensor) -> torch.Tensor:
    """`legal_actions` for a tensor of masks (..., A)."""
    legal = mask.bool()
    return legal | ~legal.any(dim=-1, keepdim=True)


def masked_values(values: torch.Tensor, mask: torch.Tensor, fill: float) -> torch.Tensor:
    """``values`` (..., A) with those of the actions ``mask`` (broadcast to them) rules out
    set to ``fill``."""
    return values.masked_fill(~legal_actions_tensor(mask), fill)


def legal_only(values: torch.Tensor, states: dict[str, torch.Tensor]) -> torch.Tensor:
    """Q-values or logits (B, A) of a batch of ``states``, the illegal actions' at
    `MASKED_FILL` where the states carry an action mask; ``values`` itself where they do not."""
    mask = states.get(ACTION_MASK)
    return values if mask is None else masked_values(values, mask, MASKED_FILL)


def legal_random_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """An action per row (B,) of a batch of masks (B, A), uniform among the row's legal
    actions (among all of them in a row with none: `legal_actions`), counted from 0.

    One uniform float per row, scaled to the row's count of legal actions, picks that many-th
    legal action: where every action is legal, the same draws as
    `coach.exploration.exploration_policy.uniform_integers`.
    """
    legal = legal_actions(mask)
    counts = legal.sum(axis=1)
    nth = (rng.random(len(legal)) * counts).astype(np.int64)
    # The first action whose running count of legal actions passes nth is the nth legal one.
    chosen: np.ndarray = (legal.cumsum(axis=1) > nth[:, None]).argmax(axis=1)
    return chosen


def legal_probabilities(legal: np.ndarray) -> np.ndarray:
    """The probabilities (B, A) of uniform choices among each row's ``legal`` actions."""
    probabilities: np.ndarray = legal / legal.sum(axis=1, keepdims=True, dtype=np.float64)
    return probabilities
