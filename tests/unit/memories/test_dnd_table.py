"""One action's table of a DND (coach/memories/dnd_table.py): its storage, its faiss index
(trained again as the table doubles, told of replaced rows at once and of moved keys in
batches) and the re-ranking that keeps searches true to the keys as they are now."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import torch

from coach.errors import CoachError
from coach.memories.dnd import DND
from coach.memories.dnd_table import DNDTable


def _keys(n: int, seed: int) -> torch.Tensor:
    mixing = np.random.default_rng(99).standard_normal((4, 8)) / 2
    latent = np.random.default_rng(seed).standard_normal((n, 4))
    return torch.as_tensor(np.tanh(latent @ mixing), dtype=torch.float32)


def _table(reindex_fraction: float = 0.01, capacity: int = 1000) -> DNDTable:
    return DNDTable(8, capacity, torch.device("cpu"), 1, 0, 64, reindex_fraction)


def _add(table: DNDTable, keys: torch.Tensor, time: int = 1) -> None:
    table.add(keys, torch.zeros(len(keys)), threshold=0.0, shift=0.1, time=time)


def test_storage_grows_by_doubling_up_to_the_capacity() -> None:
    table = DNDTable(8, 10, torch.device("cpu"), np.inf, 0, 64, 0.01)
    _add(table, _keys(3, 0))
    assert (table.size, len(table.keys)) == (3, 3)
    _add(table, _keys(1, 1))
    assert (table.size, len(table.keys)) == (4, 6)
    _add(table, _keys(5, 2))
    assert (table.size, len(table.keys), table.index) == (9, 10, None)


def test_the_index_is_trained_again_when_the_table_has_doubled() -> None:
    table = _table()
    _add(table, _keys(100, 0))
    assert table.index is not None and table.index.trained_size == 100
    assert table.index.index.nlist == 100 // 39  # few keys, few lists
    _add(table, _keys(99, 1))
    assert table.index.trained_size == 100 and table.index.index.ntotal == 199
    _add(table, _keys(1, 2))
    assert table.index.trained_size == 200 and table.index.index.ntotal == 200


def test_a_replaced_row_is_found_at_its_new_key_at_once() -> None:
    table = _table(capacity=500)
    _add(table, _keys(500, 0))
    far = torch.full((1, 8), 3.0)
    _add(table, far, time=2)  # replaces row 0, the least recently used
    assert torch.equal(table.keys[0], far[0])
    rows, real = table.search(far, 3)
    assert rows[0, 0].item() == 0 and bool(real.all())
    assert table.index is not None and table.index.index.ntotal == 500


def test_moved_keys_are_ranked_where_they_are_and_indexed_there_in_batches() -> None:
    lagging, prompt = _table(1.0, capacity=2000), _table(0.0, capacity=2000)
    keys = _keys(2000, 0)
    where, far = keys[7:8].clone(), torch.full((1, 8), 3.0)
    for table in (lagging, prompt):
        _add(table, keys)
        table.move(torch.tensor([7]), far - keys[7:8], None)
        torch.testing.assert_close(table.keys[7], far[0])
    # Indexed again at once: found where it is now.
    rows, _ = prompt.search(far, 5)
    assert rows[0, 0].item() == 7 and not bool(prompt.moved.any())
    # Not yet: the index still files it where it was, so a search there meets it, but ranks
    # it by where it is now, out of the nearest.
    assert bool(lagging.moved[7])
    rows, real = lagging.search(where, 5)
    assert 7 not in rows[0].tolist() and bool(real.all())
    distances = (lagging.keys[rows[0]] - where).pow(2).sum(1)
    assert torch.equal(distances, distances.sort().values)


def test_the_approximate_index_without_faiss_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "faiss", None)  # import faiss raises ImportError
    with pytest.raises(CoachError, match=r"coach\[nec\]"):
        DND(2, 8, capacity=100, index="approximate")
    DND(2, 8, capacity=100, index="exact")
    DND(2, 8, capacity=100, index="auto", approximate_from=1000)  # never that large
