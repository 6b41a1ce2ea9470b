"""The differentiable neural dictionary (DND) of Neural Episodic Control (Pritzel, Uria,
Srinivasan, Puigdomènech, Vinyals, Hassabis, Wierstra and Blundell, ICML 2017).

Each action has a table of keys (embeddings of states) and values (returns). A query's value
is the kernel average of the values of its k nearest keys, ``w_i = 1 / (||q - k_i||^2 +
delta)`` normalised to sum 1; it is differentiable in the query and in the keys and values
that answered, so the learner's loss moves the network through the query, and the answering
rows by plain SGD (`DND.apply_gradients`). A new key joins its action's table or, when it is
(within ``key_error_threshold`` of) a key already there, moves that entry's value towards
its own; a full table gives up its least recently used row. The LRU times count on one clock
that every `DND.add`, `DND.q_values` and `DND.lookup_taken` advances, and a row's time is
the last such call that looked it up or wrote it, as in the original Coach's DND.

How a table finds the nearest keys, exactly or through a faiss index that may lag behind SGD,
is `coach.memories.dnd_table`'s part. `DND.state_dict` holds the faiss indexes themselves, so
a resumed run searches exactly as the uninterrupted one would have.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

from coach.errors import CoachError
from coach.memories.dnd_table import QUERY_CHUNK, DNDTable, require_faiss

INDEXES = ("exact", "approximate", "auto")
"""How a `DND` searches: every key, a faiss index, or every key until a table is large."""


def kernel_weights(queries: Tensor, keys: Tensor, delta: float) -> Tensor:
    """Each neighbour's share of a query's value: ``1 / (||q - k_i||^2 + delta)``, normalised
    to sum 1 per query; differentiable in the queries (B, D) and the keys (B, k, D).

    Returns:
        The weights, (B, k).
    """
    return _weights(queries, keys, delta, None)


def kernel_values(
    queries: Tensor, keys: Tensor, values: Tensor, delta: float, valid: Tensor | None = None
) -> Tensor:
    """``sum_i w_i v_i`` per query (B,), with the weights of `kernel_weights`.

    Args:
        queries: (B, D).
        keys: The neighbours' keys, (B, k, D).
        values: Their values, (B, k).
        delta: The kernel's delta.
        valid: Which neighbours are real, (B, k) bool; the others (padding) weigh 0, and a
            query with none gets 0.
    """
    return (_weights(queries, keys, delta, valid) * values).sum(dim=-1)


def _weights(queries: Tensor, keys: Tensor, delta: float, valid: Tensor | None) -> Tensor:
    inverse = 1.0 / ((queries.unsqueeze(-2) - keys).pow(2).sum(dim=-1) + delta)
    if valid is not None:
        inverse = inverse * valid
    total = inverse.sum(dim=-1, keepdim=True)
    # A row with no neighbour divides by 1, not 0: a NaN would reach the gradients too.
    return inverse / torch.where(total > 0, total, torch.ones_like(total))


@dataclass
class Lookup:
    """What `DND.lookup_taken` gathered, for `DND.apply_gradients` after ``backward()``."""

    actions: Tensor
    """The action of each query, (B,)."""
    indices: Tensor
    """The neighbours' rows in that action's table, (B, k) (0 where padding)."""
    keys: Tensor
    """The neighbours' keys, (B, k, D): a leaf that requires grad."""
    values: Tensor
    """The neighbours' values, (B, k): a leaf that requires grad."""
    valid: Tensor
    """Which neighbours are real, (B, k) bool (a table with fewer than k rows pads)."""
    additions: int = 0
    """`DND.additions` at the lookup: after another `DND.add`, its rows may hold other keys."""


class DND:
    """A differentiable neural dictionary per action (Pritzel et al., 2017).

    Args:
        num_actions: Tables, one per action.
        key_size: The keys' length D.
        capacity: Rows per table; a full table replaces its least recently used.
        num_neighbors: Neighbours a lookup averages (k).
        delta: The kernel's delta.
        value_shift: How far a key already present moves its value to a new one (alpha).
        key_error_threshold: A new key within this squared distance of its nearest stored key
            is that key (0: only an exact duplicate).
        index: ``exact``, ``approximate`` (faiss), or ``auto``: approximate once a table holds
            ``approximate_from`` rows.
        approximate_from: Where ``auto`` turns to the faiss index.
        device: Where the tables live (faiss works on CPU copies).
        seed: Seeds the k-means of the faiss indexes.
        nprobe: Lists of a faiss index searched per query. 64 finds 0.92 of the true 50
            nearest at 500k keys (D=64) that lie on a 16-dimensional manifold, 0.999 on an
            8-dimensional one; keys that spread evenly over all 64 dimensions would need most
            of the lists searched.
        reindex_fraction: Share of a table whose keys SGD moved before they are re-indexed.
    """

    def __init__(
        self,
        num_actions: int,
        key_size: int,
        capacity: int,
        num_neighbors: int = 50,
        delta: float = 1e-3,
        value_shift: float = 0.1,
        key_error_threshold: float = 0.0,
        index: str = "auto",
        approximate_from: int = 20_000,
        device: torch.device | str = "cpu",
        seed: int = 0,
        nprobe: int = 64,
        reindex_fraction: float = 0.01,
    ) -> None:
        if index not in INDEXES:
            raise ValueError(f"index must be one of {INDEXES}, got {index!r}")
        if min(num_actions, key_size, capacity, num_neighbors, approximate_from, nprobe) < 1:
            raise ValueError(
                "num_actions, key_size, capacity, num_neighbors, approximate_from and nprobe "
                "must be >= 1"
            )
        self.num_actions, self.key_size, self.capacity = num_actions, key_size, capacity
        self.num_neighbors, self.delta, self.value_shift = num_neighbors, delta, value_shift
        self.key_error_threshold, self.index = key_error_threshold, index
        self.device = torch.device(device)
        index_from = {"exact": math.inf, "approximate": 1, "auto": approximate_from}[index]
        if capacity >= index_from:
            require_faiss()  # a missing faiss shows now, not hours into a run
        seeds = np.random.SeedSequence(seed).generate_state(num_actions) >> 1  # signed 32 bits
        self.tables = [
            DNDTable(key_size, capacity, self.device, index_from, int(s), nprobe, reindex_fraction)
            for s in seeds
        ]
        """Each action's keys and values."""
        self.clock = 0
        """Advanced by every `add`, `q_values` and `lookup_taken`: the LRU times' unit."""
        self.additions = 0
        """`add` calls so far."""

    @property
    def sizes(self) -> list[int]:
        """The rows each action's table holds."""
        return [table.size for table in self.tables]

    @torch.no_grad()
    def q_values(self, queries: Tensor) -> Tensor:
        """Q(s, a) of every action (for acting and bootstrapping; no gradients).

        Args:
            queries: Keys, (B, D).

        Returns:
            (B, A); an action whose table is empty gives 0.
        """
        self.clock += 1
        queries = queries.detach().to(self.device, torch.float32)
        q = torch.zeros(len(queries), self.num_actions, device=self.device)
        # A chunk of queries at a time: an episode's keys and their neighbours' keys would
        # otherwise be gathered all at once.
        for start in range(0, len(queries), QUERY_CHUNK):
            chunk = queries[start : start + QUERY_CHUNK]
            for action, table in enumerate(self.tables):
                if table.size:
                    rows, valid = table.search(chunk, self.num_neighbors)
                    table.last_used[rows[valid]] = self.clock
                    keys, values = table.keys[rows], table.values[rows]
                    q[start : start + QUERY_CHUNK, action] = kernel_values(
                        chunk, keys, values, self.delta, valid
                    )
        return q

    def lookup_taken(self, queries: Tensor, actions: Tensor) -> tuple[Tensor, Lookup]:
        """Q(s, a) of the actions taken, differentiable in the queries and in the neighbours'
        keys and values (the leaves of the `Lookup`, for `apply_gradients`).

        Args:
            queries: Keys, (B, D), usually requiring grad.
            actions: The action of each, (B,) int.

        Returns:
            Q, (B,); and the `Lookup`, of k = ``num_neighbors`` columns (padded where a table
            holds fewer rows, or the index finds fewer).
        """
        self.clock += 1
        batch, k = len(queries), self.num_neighbors
        actions = actions.to(self.device)
        searched = queries.detach().to(self.device, torch.float32)
        rows = torch.zeros(batch, k, dtype=torch.int64, device=self.device)
        valid = torch.zeros(batch, k, dtype=torch.bool, device=self.device)
        keys = torch.zeros(batch, k, self.key_size, device=self.device)
        values = torch.zeros(batch, k, device=self.device)
        for action, table in enumerate(self.tables):
            which = torch.nonzero(actions == action).squeeze(1)
            if not table.size or not len(which):
                continue
            near, real = table.search(searched[which], k)
            table.last_used[near[real]] = self.clock
            found = near.shape[1]
            rows[which, :found], valid[which, :found] = near, real
            keys[which, :found], values[which, :found] = table.keys[near], table.values[near]
        keys.requires_grad_(True)
        values.requires_grad_(True)
        q = kernel_values(queries.to(self.device), keys, values, self.delta, valid)
        return q, Lookup(actions, rows, keys, values, valid, self.additions)

    @torch.no_grad()
    def apply_gradients(self, lookup: Lookup, learning_rate: float) -> None:
        """One SGD step on the rows a lookup gathered, once ``backward()`` has reached its
        leaves: ``row -= learning_rate * grad``, the grads of a row gathered twice summed.
        Call it before the next `add`, which may give those rows other keys."""
        if lookup.additions != self.additions:
            raise ValueError("apply_gradients after add: the lookup's rows may hold other keys")
        key_grad, value_grad = lookup.keys.grad, lookup.values.grad
        for action, table in enumerate(self.tables):
            taken = (lookup.actions == action).unsqueeze(1) & lookup.valid
            if bool(taken.any()):
                table.move(
                    lookup.indices[taken],
                    None if key_grad is None else -learning_rate * key_grad[taken],
                    None if value_grad is None else -learning_rate * value_grad[taken],
                )

    @torch.no_grad()
    def add(self, keys: Tensor, actions: Tensor, values: Tensor) -> None:
        """Write new keys and their values, each into its action's table.

        A key within ``key_error_threshold`` of its nearest stored key (squared distance)
        moves that row's value, ``v += value_shift * (new - v)``, once per such key, in order,
        and refreshes its LRU time. The others take free rows, then the least recently used
        (ties: the lower row). Keys are matched against the tables as they were before the
        call, not against each other.

        Args:
            keys: (N, D).
            actions: (N,) int.
            values: (N,).
        """
        if not len(keys) == len(actions) == len(values) or keys.shape[1:] != (self.key_size,):
            raise ValueError(
                f"add takes keys (N, {self.key_size}), actions (N,) and values (N,), got "
                f"{tuple(keys.shape)}, {tuple(actions.shape)} and {tuple(values.shape)}"
            )
        self.clock += 1
        self.additions += 1
        keys = keys.detach().to(self.device, torch.float32)
        values = values.detach().to(self.device, torch.float32)
        actions = actions.to(self.device)
        for action, table in enumerate(self.tables):
            which = torch.nonzero(actions == action).squeeze(1)
            if len(which):
                new_keys, new_values = keys[which], values[which]
                shift, threshold = self.value_shift, self.key_error_threshold
                table.add(new_keys, new_values, threshold, shift, self.clock)

    def state_dict(self) -> dict[str, Any]:
        """Every table (rows, values, LRU times, faiss index), the clock and the additions."""
        return {
            "shape": [self.num_actions, self.key_size, self.capacity],
            "clock": self.clock,
            "additions": self.additions,
            "tables": [table.state_dict() for table in self.tables],
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what `state_dict` saved, onto this dictionary's device."""
        shape = [self.num_actions, self.key_size, self.capacity]
        if list(state.get("shape", [])) != shape:
            raise CoachError(
                f"the checkpoint's dictionaries are (actions, key size, capacity) "
                f"{state.get('shape')}, these are {shape}: not the same agent's"
            )
        self.clock, self.additions = int(state["clock"]), int(state["additions"])
        for table, table_state in zip(self.tables, state["tables"], strict=True):
            table.load_state_dict(table_state)


__all__ = ["DND", "INDEXES", "Lookup", "kernel_values", "kernel_weights"]
