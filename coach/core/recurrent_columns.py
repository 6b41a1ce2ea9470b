"""The columns that carry recurrent state through memories: what a recurrent policy stores
with each step (`coach.agents.hidden_state`) and what a learner replays sequences from.

- ``hidden.<network>``: the network's hidden state the step was decided from (zeroed
  already where the step began an episode), per env copy (parts, layers, size);
- ``next_hidden.<network>``: its state after the step, before any reset;
- ``episode_start``: whether the step began an episode.
"""

from __future__ import annotations

EPISODE_START = "episode_start"
"""The stored column that marks the steps that begin an episode."""

HIDDEN = "hidden."
"""The prefix of the hidden-state columns."""

NEXT_HIDDEN = "next_hidden."
"""The prefix of the after-the-step hidden-state columns."""


def hidden_key(network: str) -> str:
    """The stored column of a network's hidden state before each step."""
    return HIDDEN + network


def next_hidden_key(network: str) -> str:
    """The stored column of a network's hidden state after each step."""
    return NEXT_HIDDEN + network
