"""One action's table of a differentiable neural dictionary (`coach.memories.dnd`): keys and
their values, searched for a query's nearest keys, written with LRU replacement, moved by SGD.

The k nearest are found exactly (every key, in torch, on the table's device), or, for large
tables, among the candidates of a faiss inverted-file index (`IndexIVFFlat`, on CPU copies of
the keys): about ``4 sqrt(n)`` lists trained by k-means with a fixed seed, ``nprobe`` of them
searched, retrained from scratch when the table has doubled since. Either way the candidates
(twice k) are ranked again by their exact distance to the keys as they are now, ties to the
lower row, and the best k kept. That re-ranking is what lets the index lag behind SGD: keys
that `DNDTable.move` changed are re-indexed in batches, once they reach ``reindex_fraction``
of the table, not after every step; a row given a new key is re-indexed at once.

The same calls give the same results, bit for bit: faiss's k-means is seeded, its training
and search gave the same bits on one thread and on two, and the final order of the
candidates (ties to the lower row) and of LRU replacement (ties to the lower row) is never
left to ``topk``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch
from torch import Tensor

from coach.errors import CoachError

CANDIDATES = 2
"""Candidates per neighbour that a search ranks again by exact distance."""
SEARCH_ELEMENTS = 1 << 25
"""Query-key distances the exact search holds at once (128 MB of float32)."""
QUERY_CHUNK = 4096
"""Queries searched at once (their candidates' keys are gathered together)."""
MIN_POINTS_PER_LIST = 39
"""faiss's fewest training keys per list of the index (fewer lists when the table is small)."""
PARALLEL_FROM = 1024
"""Queries searched or keys added from which faiss works on all its threads (and keys trained
on, times 16). Smaller calls run on one: faiss and torch each bring an OpenMP runtime whose
idle threads spin a while after each call, and small calls on all threads, alternating with
torch's, were no faster on two cores, and slower by a fifth beside torch on two threads."""
COLUMNS = ("keys", "values", "last_used", "norms", "moved")
"""What a table holds per row, by the names of `DNDTable.state_dict`."""


@contextmanager
def _threads(work: int) -> Iterator[None]:
    """faiss on all its OpenMP threads for ``work`` queries or keys of `PARALLEL_FROM` or
    more, else on one (for this thread's calls), for a while."""
    faiss = _faiss()
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(before if work >= PARALLEL_FROM else 1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


def _faiss() -> Any:
    try:
        import faiss
    except ImportError as error:
        raise CoachError(
            "the DND's approximate index needs faiss: pip install 'coach[nec]' (faiss-cpu), "
            "or search exactly (index='exact')"
        ) from error
    return faiss


def require_faiss() -> None:
    """Raise a `CoachError` that says how to install faiss when it is missing."""
    _faiss()


class InvertedFileIndex:
    """A table's faiss `IndexIVFFlat` (squared L2), its ids the table's rows.

    Args:
        keys: The table's keys, (n, D) float32 on CPU: trained on, then indexed.
        seed: The k-means seed (0 .. 2**31 - 1).
        nprobe: Lists searched per query.
    """

    def __init__(self, keys: np.ndarray, seed: int, nprobe: int) -> None:
        faiss = _faiss()
        n, dimension = keys.shape
        lists = max(1, min(round(4 * math.sqrt(n)), n // MIN_POINTS_PER_LIST))
        self.index = faiss.IndexIVFFlat(faiss.IndexFlatL2(dimension), dimension, lists)
        self.index.cp.seed = seed
        # Ten rounds over at most 64 keys a list: at 500k keys, 4-5 s on two cores, a seventh
        # of the work of faiss's defaults (25 rounds, 256 keys a list) for about the same
        # recall (0.918 against 0.926 at nprobe 64, benchmarks.dnd's keys).
        self.index.cp.niter = 10
        self.index.cp.max_points_per_centroid = 64
        self.index.cp.min_points_per_centroid = 1
        with _threads(n // 16):
            self.index.train(keys)
        # Rows are replaced a batch at a time: a hash table finds them without a scan.
        self.index.set_direct_map_type(faiss.DirectMap.Hashtable)
        self.index.nprobe = nprobe
        with _threads(n):
            self.index.add_with_ids(keys, np.arange(n, dtype=np.int64))
        self.trained_size = n
        """The table's size when the lists were trained."""

    def replace(self, rows: np.ndarray, keys: np.ndarray) -> None:
        """Index ``rows`` (int64) at ``keys``, in place of what they held, if anything."""
        with _threads(len(rows)):
            self.index.remove_ids(rows)
            self.index.add_with_ids(keys, rows)

    def candidates(self, queries: np.ndarray, count: int) -> np.ndarray:
        """The ``count`` rows whose indexed keys are nearest each query, (B, count); -1
        where the lists searched hold fewer."""
        with _threads(len(queries)):
            _, rows = self.index.search(queries, count)
        return rows

    def serialized(self) -> np.ndarray:
        """The index as bytes (uint8), lists, order and all."""
        return _faiss().serialize_index(self.index)

    @classmethod
    def deserialized(cls, data: np.ndarray, trained_size: int) -> InvertedFileIndex:
        """The index that `serialized` gave ``data``."""
        index = cls.__new__(cls)
        index.index = _faiss().deserialize_index(np.asarray(data, dtype=np.uint8))
        index.trained_size = trained_size
        return index


class DNDTable:
    """One action's keys and values.

    Args:
        key_size: The keys' length D.
        capacity: The most rows it holds.
        device: Where its tensors live.
        index_from: The size from which it searches a faiss index (``math.inf``: never).
        seed: The k-means seed of that index.
        nprobe: Lists of the index searched per query.
        reindex_fraction: Share of the rows whose keys `move` changed before they are
            re-indexed.
    """

    def __init__(
        self,
        key_size: int,
        capacity: int,
        device: torch.device,
        index_from: float,
        seed: int,
        nprobe: int,
        reindex_fraction: float,
    ) -> None:
        self.capacity, self.device, self.index_from = capacity, device, index_from
        self.seed, self.nprobe, self.reindex_fraction = seed, nprobe, reindex_fraction
        self.size = 0
        """Rows in use: ``0 .. size - 1``."""
        self.keys = self._zeros(0, key_size)
        """The keys, (allocated rows, D); rows are allocated by doubling up to the capacity."""
        self.values = self._zeros(0)
        """The values, (allocated rows,)."""
        self.last_used = self._zeros(0, dtype=torch.int64)
        """Each row's LRU time: when a lookup or a write last touched it."""
        self.norms = self._zeros(0)
        """Each key's squared norm, which the exact search ranks by."""
        self.moved = self._zeros(0, dtype=torch.bool)
        """The rows whose keys `move` changed since the index last saw them."""
        self.index: InvertedFileIndex | None = None

    def _zeros(self, *shape: int, dtype: torch.dtype = torch.float32) -> Tensor:
        return torch.zeros(shape, dtype=dtype, device=self.device)

    def _columns(self) -> list[Tensor]:
        return [self.keys, self.values, self.last_used, self.norms, self.moved]

    def _set_columns(self, columns: list[Tensor]) -> None:
        self.keys, self.values, self.last_used, self.norms, self.moved = columns

    # -- searching --------------------------------------------------------------------------

    def search(self, queries: Tensor, k: int) -> tuple[Tensor, Tensor]:
        """The nearest rows to each query, nearest first, ties to the lower row.

        Args:
            queries: (B, D) float32 on the table's device; the table must not be empty.
            k: Rows wanted per query.

        Returns:
            The rows, (B, min(k, size)) int64, and which of them are real (B, min(k, size)):
            the index may find fewer than asked; the rest are row 0, not real.
        """
        k = min(k, self.size)
        count = min(CANDIDATES * k, self.size)
        step = QUERY_CHUNK if self.index else min(QUERY_CHUNK, SEARCH_ELEMENTS // self.size)
        found = []
        for start in range(0, len(queries), max(1, step)):
            chunk = queries[start : start + max(1, step)]
            if self.index is None:
                # ||q - k||^2 less ||q||^2, which is the same for all of a query's rows.
                keys, norms = self.keys[: self.size], self.norms[: self.size]
                partial = torch.addmm(norms, chunk, keys.T, alpha=-2.0)
                candidates = partial.topk(count, dim=1, largest=False, sorted=False).indices
            else:
                rows = self.index.candidates(chunk.cpu().contiguous().numpy(), count)
                candidates = torch.from_numpy(rows).to(self.device)
            found.append(self._rank(chunk, candidates, k))
        return torch.cat([r for r, _ in found]), torch.cat([v for _, v in found])

    def _rank(self, queries: Tensor, rows: Tensor, k: int) -> tuple[Tensor, Tensor]:
        # The candidates in row order, then stably by their exact distance to the keys as
        # they are now: the nearest first, ties to the lower row, whatever order came in.
        rows = rows.sort(dim=1).values
        real = rows >= 0
        rows = rows.clamp(min=0)
        distances = (queries.unsqueeze(1) - self.keys[rows]).pow(2).sum(dim=-1)
        order = distances.masked_fill(~real, math.inf).sort(dim=1, stable=True).indices[:, :k]
        return rows.gather(1, order), real.gather(1, order)

    # -- writing ----------------------------------------------------------------------------

    def add(self, keys: Tensor, values: Tensor, threshold: float, shift: float, time: int) -> None:
        """Write keys and their values (see `DND.add`); the rows written get LRU ``time``."""
        known = torch.zeros(len(keys), dtype=torch.bool, device=self.device)
        if self.size:
            nearest, real = self.search(keys, 1)
            nearest = nearest[:, 0]
            error = (keys - self.keys[nearest]).pow(2).sum(dim=1)
            known = real[:, 0] & (error <= threshold)
            if bool(known.any()):
                self._shift(nearest[known], values[known], shift, time)
        if not bool(known.all()):
            self._insert(keys[~known], values[~known], time)

    def _shift(self, rows: Tensor, new: Tensor, shift: float, time: int) -> None:
        # m shifts of one row leave (1-a)^m v + sum_j a (1-a)^(m-j) new_j: every row's
        # shifts in one step, the j-th of its m in the order given.
        order = rows.sort(stable=True).indices
        rows, new = rows[order], new[order]
        unique, inverse, counts = torch.unique_consecutive(
            rows, return_inverse=True, return_counts=True
        )
        first = torch.cumsum(counts, 0) - counts
        position = torch.arange(len(rows), device=self.device) - first[inverse]
        later = (counts[inverse] - 1 - position).float()  # the row's shifts after this one
        keep = 1.0 - shift
        self.values[unique] *= keep ** counts.float()
        accumulate(self.values, unique[inverse], shift * keep**later * new)
        self.last_used[unique] = time

    def _insert(self, keys: Tensor, values: Tensor, time: int) -> None:
        # Beyond the capacity, the earlier keys would be replaced by the later ones.
        keys, values = keys[-self.capacity :], values[-self.capacity :]
        size = self.size
        free = min(len(keys), self.capacity - size)
        rows = torch.arange(size, size + free, device=self.device)
        if len(keys) > free:
            # LRU time then row, one int64 with no two alike: topk leaves ties unordered.
            order = self.last_used[:size] * size + torch.arange(size, device=self.device)
            rows = torch.cat([rows, order.topk(len(keys) - free, largest=False).indices])
        self._reserve(size + free)
        self.keys[rows], self.values[rows], self.last_used[rows] = keys, values, time
        self.norms[rows], self.moved[rows] = keys.pow(2).sum(dim=1), False
        self.size = size + free
        if self.index is None and self.size < self.index_from:
            return
        if self.index is None or self.size >= 2 * self.index.trained_size:
            keys_now = self.keys[: self.size].cpu().numpy()
            self.index = InvertedFileIndex(keys_now, self.seed, self.nprobe)
            self.moved[:] = False
        else:
            self.index.replace(rows.cpu().numpy(), keys.cpu().numpy())

    def _reserve(self, rows: int) -> None:
        """Grow the storage (by doubling, up to the capacity) to hold ``rows``."""
        held = len(self.keys)
        if rows > held:
            more = min(self.capacity, max(rows, 2 * held)) - held
            grown = [
                torch.cat([c, self._zeros(more, *c.shape[1:], dtype=c.dtype)])
                for c in self._columns()
            ]
            self._set_columns(grown)

    def move(self, rows: Tensor, key_steps: Tensor | None, value_steps: Tensor | None) -> None:
        """Add SGD steps to rows' keys (rows, D) and values (rows,), a row named twice
        getting both."""
        if key_steps is not None:
            accumulate(self.keys, rows, key_steps)
            self.norms[rows] = self.keys[rows].pow(2).sum(dim=1)
            if self.index is not None:
                self.moved[rows] = True
                moved = torch.nonzero(self.moved).squeeze(1)
                if len(moved) >= max(1, self.reindex_fraction * self.size):
                    self.index.replace(moved.cpu().numpy(), self.keys[moved].cpu().numpy())
                    self.moved[moved] = False
        if value_steps is not None:
            accumulate(self.values, rows, value_steps)

    # -- checkpoints ------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """The rows in use (on CPU) and the faiss index. The norms are kept, not recomputed:
        summed in another batch shape, a norm may differ in its last bit."""
        state: dict[str, Any] = {
            name: column[: self.size].cpu()
            for name, column in zip(COLUMNS, self._columns(), strict=True)
        }
        state["index"] = None if self.index is None else self.index.serialized()
        state["trained_size"] = None if self.index is None else self.index.trained_size
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        size = len(state["keys"])
        if size > self.capacity or tuple(state["keys"].shape[1:]) != tuple(self.keys.shape[1:]):
            raise CoachError(
                f"a checkpointed DND table of keys {tuple(state['keys'].shape)} does not fit "
                f"this one (capacity {self.capacity}, key size {self.keys.shape[1]})"
            )
        self._set_columns([c[:0] for c in self._columns()])
        self._reserve(size)
        for name, column in zip(COLUMNS, self._columns(), strict=True):
            column[:size] = state[name].to(self.device)
        self.size = size
        data = state["index"]
        if data is None:
            self.index = None
        else:
            data = data.numpy() if isinstance(data, Tensor) else data
            self.index = InvertedFileIndex.deserialized(data, int(state["trained_size"]))


def accumulate(table: Tensor, rows: Tensor, updates: Tensor) -> None:
    """``table[rows] += updates``, a row named twice getting both, added in the same order
    every time: CPU's ``index_add_`` adds in order, CUDA's adds by atomics in any order, where
    CUDA's ``index_put_(accumulate=True)`` sorts the rows first."""
    if table.is_cuda:
        table.index_put_((rows,), updates, accumulate=True)
    else:
        table.index_add_(0, rows, updates)
