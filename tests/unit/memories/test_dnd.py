"""The differentiable neural dictionary (coach/memories/dnd.py): neighbours against brute
force, the kernel by hand, LRU replacement and value shifts, SGD on the rows looked up
(against autograd written out here), checkpoints and determinism, on every device here."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch

from coach.checkpoints import pack, unpack
from coach.errors import CoachError
from coach.memories.dnd import DND, kernel_values, kernel_weights
from tests.devices import DEVICES


def _structured(n: int, rng: np.random.Generator, size: int = 16) -> torch.Tensor:
    """Keys as a network would make them: on an 8-dimensional manifold in ``size`` dimensions
    (on keys spread evenly over every dimension, no inverted-file index does well)."""
    mixing = np.random.default_rng(99).standard_normal((8, size)) / np.sqrt(8)
    return torch.as_tensor(np.tanh(rng.standard_normal((n, 8)) @ mixing), dtype=torch.float32)


def _brute_force(keys: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    distances = ((queries[:, None, :] - keys[None]) ** 2).sum(-1)
    return np.argsort(distances, axis=1, kind="stable")[:, :k]


def _kernel(query: np.ndarray, keys: np.ndarray, values: np.ndarray, delta: float) -> float:
    weights = 1.0 / (((keys - query) ** 2).sum(-1) + delta)
    return float((weights / weights.sum() * values).sum())


# -- the kernel -------------------------------------------------------------------------------


def test_kernel_weights_and_values_by_hand() -> None:
    # q = (0, 0); keys (1, 0) and (0, 2) at squared distances 1 and 4; delta 1:
    # 1/2 and 1/5 normalise to 5/7 and 2/7; with values 3 and -4, Q = 15/7 - 8/7 = 1.
    queries = torch.tensor([[0.0, 0.0]])
    keys = torch.tensor([[[1.0, 0.0], [0.0, 2.0]]])
    values = torch.tensor([[3.0, -4.0]])
    torch.testing.assert_close(kernel_weights(queries, keys, 1.0), torch.tensor([[5 / 7, 2 / 7]]))
    torch.testing.assert_close(kernel_values(queries, keys, values, 1.0), torch.tensor([1.0]))
    # Only the first neighbour real: all the weight on it; none real: 0, and no NaN gradient.
    torch.testing.assert_close(
        kernel_values(queries, keys, values, 1.0, torch.tensor([[True, False]])),
        torch.tensor([3.0]),
    )
    queries.requires_grad_(True)
    none = kernel_values(queries, keys, values, 1.0, torch.tensor([[False, False]]))
    none.sum().backward()
    assert none.item() == 0.0
    assert queries.grad is not None and torch.equal(queries.grad, torch.zeros(1, 2))


@pytest.mark.parametrize("device", DEVICES)
def test_q_values_by_hand_and_an_empty_table_gives_zero(device: str) -> None:
    dnd = DND(2, 2, capacity=10, num_neighbors=2, delta=1.0, index="exact", device=device)
    keys = torch.tensor([[1.0, 0.0], [0.0, 2.0], [5.0, 5.0]])
    dnd.add(keys, torch.tensor([0, 0, 0]), torch.tensor([3.0, -4.0, 100.0]))
    # The two nearest of (0, 0) are the example above; (5, 5) is left out.
    q = dnd.q_values(torch.zeros(1, 2, device=device))
    torch.testing.assert_close(q.cpu(), torch.tensor([[1.0, 0.0]]))
    assert dnd.sizes == [3, 0]


# -- the neighbours ---------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("size", [7, 500])
def test_exact_lookup_is_brute_force_nearest_neighbours(device: str, size: int) -> None:
    rng = np.random.default_rng(size)
    keys = rng.standard_normal((size, 8)).astype(np.float32)
    values = rng.standard_normal(size).astype(np.float32)
    queries = rng.standard_normal((40, 8)).astype(np.float32)
    dnd = DND(3, 8, capacity=1000, num_neighbors=10, delta=1e-3, index="exact", device=device)
    dnd.add(torch.as_tensor(keys), torch.ones(size, dtype=torch.int64), torch.as_tensor(values))
    nearest = _brute_force(keys.astype(np.float64), queries.astype(np.float64), 10)

    q, lookup = dnd.lookup_taken(torch.as_tensor(queries, device=device), torch.ones(40).long())
    found = min(10, size)
    np.testing.assert_array_equal(lookup.indices[:, :found].cpu().numpy(), nearest)
    assert bool(lookup.valid[:, :found].all()) and not bool(lookup.valid[:, found:].any())
    expected = [_kernel(queries[i], keys[nearest[i]], values[nearest[i]], 1e-3) for i in range(40)]
    np.testing.assert_allclose(q.detach().cpu().numpy(), expected, rtol=1e-5)
    acting = dnd.q_values(torch.as_tensor(queries, device=device)).cpu().numpy()
    np.testing.assert_allclose(acting[:, 1], expected, rtol=1e-5)
    np.testing.assert_array_equal(acting[:, [0, 2]], 0.0)


def test_approximate_lookup_recalls_the_exact_neighbours() -> None:
    rng = np.random.default_rng(0)
    keys, values = _structured(20_000, rng), torch.as_tensor(rng.standard_normal(20_000))
    queries = _structured(200, rng)
    actions = torch.zeros(20_000, dtype=torch.int64)
    exact = DND(1, 16, capacity=20_000, num_neighbors=50, index="exact")
    approximate = DND(1, 16, capacity=20_000, num_neighbors=50, index="auto")
    for dnd in (exact, approximate):
        dnd.add(keys, actions, values)
    assert approximate.tables[0].index is not None and exact.tables[0].index is None

    _, truth = exact.lookup_taken(queries, torch.zeros(200, dtype=torch.int64))
    q, found = approximate.lookup_taken(queries, torch.zeros(200, dtype=torch.int64))
    recall = np.mean(
        [
            len(set(true.tolist()) & set(rows[real].tolist())) / 50
            for true, rows, real in zip(truth.indices, found.indices, found.valid, strict=True)
        ]
    )
    assert recall >= 0.9
    # Q is the kernel over the neighbours the index gave, as they are in the table.
    table = approximate.tables[0]
    expected = kernel_values(
        queries, table.keys[found.indices], table.values[found.indices], 1e-3, found.valid
    )
    torch.testing.assert_close(q.detach(), expected)
    torch.testing.assert_close(approximate.q_values(queries)[:, 0], expected)


# -- writing ----------------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_a_full_table_replaces_its_least_recently_used_rows(device: str) -> None:
    dnd = DND(1, 1, capacity=4, num_neighbors=1, index="exact", device=device)
    zeros = torch.zeros(5, dtype=torch.int64)

    def add(*keys: float) -> None:
        dnd.add(torch.tensor(keys)[:, None], zeros[: len(keys)], torch.tensor(keys) * 10)

    def table() -> list[float]:
        return dnd.tables[0].keys[:, 0].cpu().tolist()

    add(0.0, 10.0, 20.0, 30.0)  # clock 1: rows 0..3
    dnd.q_values(torch.tensor([[21.0]], device=device))  # clock 2: row 2
    dnd.lookup_taken(torch.tensor([[1.0]], device=device), zeros[:1])  # clock 3: row 0
    assert dnd.tables[0].last_used.cpu().tolist() == [3, 1, 2, 1]
    # Rows 1 and 3 are the oldest (time 1; the lower row first), then row 2.
    add(40.0, 50.0)
    assert table() == [0.0, 40.0, 20.0, 50.0]
    add(60.0)
    assert table() == [0.0, 40.0, 60.0, 50.0]
    assert dnd.sizes == [4]
    # More new keys than rows: the last four are kept, the earlier would replace each other.
    add(1.5, 2.5, 3.5, 4.5, 5.5)
    assert sorted(table()) == [2.5, 3.5, 4.5, 5.5]


@pytest.mark.parametrize("device", DEVICES)
def test_a_known_key_shifts_its_value_and_is_used_again(device: str) -> None:
    dnd = DND(2, 2, capacity=3, value_shift=0.1, key_error_threshold=0.0, device=device)
    keys = torch.tensor([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    dnd.add(keys, torch.tensor([1, 1, 1]), torch.tensor([1.0, 2.0, 3.0]))
    # The key of row 1 again, twice in one call: 2 -> 2 + 0.1 (12 - 2) = 3 -> 3 + 0.1 (23 - 3).
    dnd.add(keys[[1, 1]], torch.tensor([1, 1]), torch.tensor([12.0, 23.0]))
    values = dnd.tables[1].values.cpu()
    torch.testing.assert_close(values, torch.tensor([1.0, 5.0, 3.0]))
    assert dnd.sizes == [0, 3] and dnd.tables[1].last_used.cpu().tolist() == [1, 2, 1]
    # Within the threshold a near key is that key; the new one replaces row 0, used least.
    near = DND(1, 2, capacity=3, value_shift=0.5, key_error_threshold=0.02, device=device)
    near.add(keys, torch.zeros(3, dtype=torch.int64), torch.tensor([1.0, 2.0, 3.0]))
    near.add(torch.tensor([[1.1, 0.0], [5.0, 5.0]]), torch.tensor([0, 0]), torch.tensor([4.0, 9.0]))
    torch.testing.assert_close(near.tables[0].values.cpu(), torch.tensor([9.0, 3.0, 3.0]))
    torch.testing.assert_close(near.tables[0].keys[0].cpu(), torch.tensor([5.0, 5.0]))


# -- learning ---------------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_gradients_reach_the_queries_and_move_exactly_the_rows_looked_up(device: str) -> None:
    rng = np.random.default_rng(3)
    dnd = DND(2, 4, capacity=100, num_neighbors=5, delta=0.1, index="exact", device=device)
    dnd.add(
        torch.as_tensor(rng.standard_normal((60, 4)), dtype=torch.float32),
        torch.as_tensor(rng.integers(0, 2, 60)),
        torch.as_tensor(rng.standard_normal(60), dtype=torch.float32),
    )
    before = [(t.keys.clone(), t.values.clone()) for t in dnd.tables]
    # Queries 0 and 1 alike: they share neighbours, whose steps add up.
    raw = rng.standard_normal((6, 4))
    raw[1] = raw[0] + 0.01
    queries = torch.tensor(raw, dtype=torch.float32, device=device, requires_grad=True)
    actions = torch.tensor([0, 0, 1, 1, 0, 1], device=device)
    targets = torch.tensor([1.0, -1.0, 0.5, 2.0, 0.0, 1.0], device=device)
    q, lookup = dnd.lookup_taken(queries, actions)
    ((q - targets) ** 2).sum().backward()
    dnd.apply_gradients(lookup, learning_rate=0.5)

    # The same loss written out, on leaves gathered from the tables as they were.
    mine = queries.detach().clone().requires_grad_(True)
    rows = lookup.indices
    keys = torch.stack([before[int(a)][0][r] for a, r in zip(actions, rows, strict=True)])
    values = torch.stack([before[int(a)][1][r] for a, r in zip(actions, rows, strict=True)])
    keys.requires_grad_(True)
    values.requires_grad_(True)
    weights = 1.0 / (((mine[:, None, :] - keys) ** 2).sum(-1) + 0.1)
    expected_q = (weights / weights.sum(1, keepdim=True) * values).sum(1)
    ((expected_q - targets) ** 2).sum().backward()
    torch.testing.assert_close(q.detach(), expected_q.detach())
    assert queries.grad is not None and mine.grad is not None
    torch.testing.assert_close(queries.grad, mine.grad)

    assert keys.grad is not None and values.grad is not None
    for action, table in enumerate(dnd.tables):
        expected_keys, expected_values = before[action][0].clone(), before[action][1].clone()
        for b in np.flatnonzero(actions.cpu().numpy() == action):
            for j, row in enumerate(rows[b].tolist()):
                expected_keys[row] -= 0.5 * keys.grad[b, j]
                expected_values[row] -= 0.5 * values.grad[b, j]
        torch.testing.assert_close(table.keys, expected_keys)
        torch.testing.assert_close(table.values, expected_values)
        untouched = np.setdiff1d(np.arange(table.size), rows[actions == action].cpu().numpy())
        assert torch.equal(table.keys[untouched], before[action][0][untouched])
    assert len(np.unique(rows[:2].cpu().numpy())) < 10  # the shared rows were there


def test_apply_gradients_refuses_a_lookup_older_than_an_add() -> None:
    dnd = DND(1, 2, capacity=5, num_neighbors=2, index="exact")
    dnd.add(torch.eye(2), torch.zeros(2, dtype=torch.int64), torch.ones(2))
    q, lookup = dnd.lookup_taken(torch.zeros(1, 2), torch.zeros(1, dtype=torch.int64))
    q.sum().backward()
    dnd.add(torch.ones(1, 2), torch.zeros(1, dtype=torch.int64), torch.ones(1))
    with pytest.raises(ValueError, match="after add"):
        dnd.apply_gradients(lookup, 0.1)


# -- checkpoints and determinism --------------------------------------------------------------


def _drive(dnd: DND, seed: int, rounds: int) -> list[torch.Tensor]:
    """Adds (past the capacity), acting lookups, learning lookups and SGD steps; the
    results."""
    rng = np.random.default_rng(seed)
    device = dnd.device
    results = []
    for _ in range(rounds):
        keys = _structured(500, rng).to(device)
        actions = torch.as_tensor(rng.integers(0, 2, 500), device=device)
        dnd.add(keys, actions, torch.as_tensor(rng.standard_normal(500), device=device).float())
        queries = _structured(32, rng).to(device).requires_grad_(True)
        results.append(dnd.q_values(queries))
        q, lookup = dnd.lookup_taken(queries, torch.as_tensor(rng.integers(0, 2, 32)))
        (q**2).sum().backward()
        dnd.apply_gradients(lookup, 0.05)
        assert queries.grad is not None
        results += [q.detach(), lookup.indices, queries.grad]
    return results


def _dnd(index: str, device: str = "cpu") -> DND:
    return DND(
        2,
        16,
        1000,
        num_neighbors=10,
        index=index,
        approximate_from=400,
        device=device,
        seed=7,
        reindex_fraction=0.2,
    )


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("index", ["exact", "auto"])
def test_a_dictionary_loaded_from_its_state_carries_on_as_the_original(
    index: str, device: str
) -> None:
    original = _dnd(index, device)
    _drive(original, seed=1, rounds=4)  # auto: trained at about 500 rows, again when full
    buffer = io.BytesIO()
    torch.save(pack(original.state_dict()), buffer)
    buffer.seek(0)
    resumed = _dnd(index, device)
    resumed.load_state_dict(unpack(torch.load(buffer, weights_only=True)))
    if index == "auto":
        assert all(t.index is not None for t in resumed.tables)
        assert any(bool(t.moved.any()) for t in resumed.tables)  # moves not re-indexed yet
    for a, b in zip(_drive(original, 2, 3), _drive(resumed, 2, 3), strict=True):
        assert torch.equal(a, b)
    for a, b in zip(original.tables, resumed.tables, strict=True):
        assert a.size == b.size
        assert torch.equal(a.keys[: a.size], b.keys[: b.size])
        assert torch.equal(a.last_used[: a.size], b.last_used[: b.size])


def test_a_checkpoint_of_other_dictionaries_is_refused() -> None:
    with pytest.raises(CoachError, match="key size"):
        _dnd("exact").load_state_dict(DND(2, 8, capacity=1000).state_dict())


@pytest.mark.parametrize("index", ["exact", "auto"])
def test_two_dictionaries_driven_alike_stay_alike(index: str) -> None:
    first, second = _dnd(index), _dnd(index)
    for a, b in zip(_drive(first, 3, 5), _drive(second, 3, 5), strict=True):
        assert torch.equal(a, b)
    for a, b in zip(first.tables, second.tables, strict=True):
        assert torch.equal(a.keys, b.keys) and torch.equal(a.values, b.values)
        assert torch.equal(a.last_used, b.last_used)
        if index == "auto":
            assert a.index is not None and b.index is not None
            assert np.array_equal(a.index.serialized(), b.index.serialized())
