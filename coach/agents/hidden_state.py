"""The acting state of recurrent networks: one hidden state per network and environment copy.

A policy that reads a recurrent network (an LSTM or GRU middleware) carries, for each
environment copy, the network's hidden state from one step to the next. `HiddenStates`
holds them on the acting side (`coach.agents.acting.Policy.hidden`): each decision runs the
network one step from the copies' states (`HiddenStates.run`), and once the decision is
made the states move on (`HiddenStates.advance`). Where an episode starts (the explicit
episode-start flags, `HiddenStates.start`), the copy's state is zeroed before its next step.

What learning needs of them goes into each stored step (`recurrent_extras`): the state the
step was decided from (``hidden.<network>``, zeroed already where the step began an
episode), the state after it (``next_hidden.<network>``, before any reset: what the step's
successor is valued from where a time limit cut the episode) and whether it began an
episode (``episode_start``). A learner replays a stored sequence from its first step's
state and zeroes the state again at every episode start inside it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from coach.core.recurrent_columns import EPISODE_START, hidden_key, next_hidden_key
from coach.networks.network_wrapper import NetworkWrapper
from coach.networks.parameters import NetworkParameters
from coach.networks.recurrence import scaled_state


def recurrent_extras(networks: dict[str, NetworkParameters]) -> dict[str, spaces.Space]:
    """The columns a memory keeps per step for the recurrent ones of ``networks`` (none
    when every network is feed-forward)."""
    extras: dict[str, spaces.Space] = {}
    for name, params in networks.items():
        recurrent = params.recurrent
        if recurrent is None:
            continue
        state = spaces.Box(-np.inf, np.inf, recurrent.state_shape, np.float32)
        extras[hidden_key(name)] = state
        extras[next_hidden_key(name)] = state
    if extras:
        extras[EPISODE_START] = spaces.Box(0, 1, (), np.bool_)
    return extras


class HiddenStates:
    """The hidden states of an agent's recurrent networks, per environment copy.

    Args:
        networks: The agent's networks by name; the recurrent ones get a state.
        num_envs: How many environment copies the agent acts in.
    """

    def __init__(self, networks: dict[str, NetworkWrapper], num_envs: int) -> None:
        self.networks = {name: net for name, net in networks.items() if net.recurrent}
        self.names = {net: name for name, net in self.networks.items()}
        """Each recurrent network's name, by the network."""
        self.num_envs = num_envs
        self.states = {name: net.initial_state(num_envs) for name, net in self.networks.items()}
        """Each network's state before the copies' next step, (B, parts, layers, size)."""
        self.starting = np.ones(num_envs, dtype=bool)
        """The copies whose next step begins an episode (their state is zeroed first)."""
        self.rows: np.ndarray | None = None
        """The copies the step being decided is for (``None``: every copy; `select`)."""
        self._before: dict[str, torch.Tensor] = {}
        self._after: dict[str, torch.Tensor] = {}

    def __bool__(self) -> bool:
        return bool(self.networks)

    def start(self, copies: np.ndarray) -> None:
        """Episodes begin in the copies ``copies`` (a (B,) mask) with their next step."""
        self.starting |= copies

    def select(self, rows: np.ndarray | None) -> None:
        """The next step is decided for the copies ``rows`` only (``None``: every copy): a
        multi-agent level's slots whose ids decide. The others' states stay as they are."""
        self.rows = rows

    def run(
        self, network: NetworkWrapper, inputs: dict[str, torch.Tensor]
    ) -> dict[str, torch.Tensor]:
        """A recurrent network one step on a batch of states (B, ...: every copy's, or the
        selected copies'), from those copies' states; its outputs (B, ...). The states move
        on only with `advance`."""
        name = self.names[network]
        before, starting = self.states[name], self.starting
        if self.rows is not None:
            before, starting = before[torch.as_tensor(self.rows)], starting[self.rows]
        if starting.any():
            before = scaled_state(before, torch.as_tensor(~starting, device=before.device))
        with torch.no_grad():
            outputs, after = network.online.step(inputs, before)
        self._before[name], self._after[name] = before, after
        return outputs

    def run_all(self, inputs: dict[str, torch.Tensor]) -> None:
        """Every network one step (random acting in heatup: the states still follow the
        episode)."""
        for network in self.networks.values():
            self.run(network, inputs)

    def advance(self) -> dict[str, np.ndarray]:
        """The step is decided: every network moves to its state after the step. Returns
        what the step stores (`recurrent_extras`)."""
        missing = set(self.networks) - set(self._before)
        assert not missing, f"the policy decided without running {sorted(missing)}"
        rows = self.rows
        starting = self.starting if rows is None else self.starting[rows]
        stored: dict[str, np.ndarray] = {EPISODE_START: starting.copy()}
        for name in self.networks:
            before, after = self._before[name], self._after[name]
            stored[hidden_key(name)] = before.cpu().numpy()
            stored[next_hidden_key(name)] = after.cpu().numpy()
            if rows is None:
                self.states[name] = after
            else:  # a new tensor: the one before may still be read
                states = self.states[name].clone()
                states[torch.as_tensor(rows)] = after
                self.states[name] = states
        self._before, self._after = {}, {}
        if rows is None:
            self.starting = np.zeros(self.num_envs, dtype=bool)
        else:
            self.starting = self.starting.copy()
            self.starting[rows] = False
        self.rows = None
        return stored

    def state_dict(self) -> dict[str, Any]:
        """The states and the pending episode starts, for checkpoints."""
        return {
            "states": {name: state.cpu() for name, state in self.states.items()},
            "starting": self.starting.copy(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what `state_dict` returned."""
        for name, saved in state["states"].items():
            self.states[name] = saved.to(self.states[name].device)
        self.starting = np.asarray(state["starting"], dtype=bool).copy()
