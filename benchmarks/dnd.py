"""Speed and recall of the differentiable neural dictionary (NEC's `DND`), exact and through
its faiss index, at the sizes NEC runs at.

    python -m benchmarks.dnd [--sizes N ...] [--iterations I] [--repeats R] [--threads T]
                             [--short]

For each size, a `DND` of 4 actions whose tables all hold that many keys (D = 64) is timed
searching exactly (``index="exact"``) and through its inverted-file index
(``index="approximate"``, nprobe 64). The keys are what a network makes rather than noise:
``tanh`` of a random linear map of 16-dimensional Gaussian points, so they lie on a
16-dimensional manifold in 64 dimensions (on keys spread evenly over all 64 no inverted-file
index beats a full scan); the queries come from the same distribution. Per iteration:

- lookup: `DND.lookup_taken` of 32 queries in one action's table (k = 50) and the
  ``backward()`` of their Q, the learning lookup with its gradients;
- acting: `DND.q_values` of one query in all 4 tables;
- update: `DND.apply_gradients` (learning rate 0.01) of that lookup, then `DND.add` of 32
  new keys to the same table (full: 32 least recently used rows replaced, and re-indexed).

Each figure is the mean over ``--iterations`` iterations, the best of ``--repeats`` such
runs; ``--threads`` sets torch's threads (on a machine that other work shares, one thread
gives steadier figures). Then recall@50: the share of the true 50 nearest keys (by brute
force over the table as it is after those updates) that a lookup of 200 fresh queries
returns. ``index s`` is the time to train and fill one table's faiss index (k-means over the
table, once per doubling of it). ``--short`` takes tiny tables and budgets on the same code
paths (for tests).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from coach.memories.dnd import DND

ACTIONS, KEY_SIZE, NEIGHBORS, BATCH, LATENT = 4, 64, 50, 32, 16


class Keys:
    """Keys on a ``LATENT``-dimensional manifold in ``KEY_SIZE`` dimensions."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        mixing = np.random.default_rng(0).standard_normal((LATENT, KEY_SIZE))
        self.mixing = torch.as_tensor(mixing / np.sqrt(LATENT), dtype=torch.float32)

    def __call__(self, n: int) -> torch.Tensor:
        latent = torch.as_tensor(self.rng.standard_normal((n, LATENT)), dtype=torch.float32)
        return torch.tanh(latent @ self.mixing)


def filled(index: str, size: int, keys: Keys) -> tuple[DND, float]:
    """A DND of ``ACTIONS`` full tables of ``size`` keys (loaded as a checkpoint would be,
    which skips a million duplicate checks); and the seconds its first table's faiss index
    took to build (0 for the exact search)."""
    dnd = DND(ACTIONS, KEY_SIZE, size, NEIGHBORS, index=index, seed=0)
    state = dnd.state_dict()
    for table in state["tables"]:
        table_keys = keys(size)
        table.update(
            keys=table_keys,
            values=torch.as_tensor(keys.rng.standard_normal(size), dtype=torch.float32),
            last_used=torch.zeros(size, dtype=torch.int64),
            norms=table_keys.pow(2).sum(dim=1),
            moved=torch.zeros(size, dtype=torch.bool),
        )
    dnd.load_state_dict(state)
    built = 0.0
    for action in range(ACTIONS):  # one new key each: an approximate table trains its index
        start = time.perf_counter()
        dnd.add(keys(1), torch.tensor([action]), torch.zeros(1))
        built = built or time.perf_counter() - start
    return dnd, built if index == "approximate" else 0.0


def timed(dnd: DND, keys: Keys, iterations: int) -> tuple[float, float, float]:
    """Seconds per learning lookup (with backward), per acting lookup, per update."""
    lookup = acting = update = 0.0
    action = torch.zeros(BATCH, dtype=torch.int64)
    for _ in range(iterations):
        queries = keys(BATCH).requires_grad_(True)
        start = time.perf_counter()
        q, gathered = dnd.lookup_taken(queries, action)
        q.sum().backward()
        looked_up = time.perf_counter()
        dnd.apply_gradients(gathered, learning_rate=0.01)
        dnd.add(keys(BATCH), action, torch.as_tensor(keys.rng.standard_normal(BATCH)))
        updated = time.perf_counter()
        dnd.q_values(keys(1))
        acting += time.perf_counter() - updated
        lookup += looked_up - start
        update += updated - looked_up
    return lookup / iterations, acting / iterations, update / iterations


def recall(dnd: DND, keys: Keys, queries: int = 200) -> float:
    """The share of the true ``NEIGHBORS`` nearest keys of action 0 a lookup returns."""
    table, search = dnd.tables[0], keys(queries)
    _, lookup = dnd.lookup_taken(search, torch.zeros(queries, dtype=torch.int64))
    found = 0
    for start in range(0, queries, 20):  # brute force, 20 queries a pass over the table
        rows = slice(start, start + 20)
        distances = torch.cdist(search[rows], table.keys[: table.size]).pow(2)
        truth = distances.topk(NEIGHBORS, largest=False).indices
        for true, got, real in zip(truth, lookup.indices[rows], lookup.valid[rows], strict=True):
            found += len(set(true.tolist()) & set(got[real].tolist()))
    return found / (queries * NEIGHBORS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 500_000])
    parser.add_argument("--iterations", type=int, default=50, help="iterations per timing")
    parser.add_argument("--repeats", type=int, default=3, help="timings per figure (best kept)")
    parser.add_argument("--threads", type=int, default=None, help="torch's threads")
    parser.add_argument("--short", action="store_true", help="tiny budgets (for tests)")
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    warmup = 5
    if args.short:
        args.sizes, args.iterations, args.repeats, warmup = [2_000, 5_000], 5, 1, 1

    rows = []
    for size in args.sizes:
        for index in ("exact", "approximate"):
            keys = Keys(seed=size)
            dnd, built = filled(index, size, keys)
            timed(dnd, keys, warmup)
            figures = [timed(dnd, keys, args.iterations) for _ in range(args.repeats)]
            best = [min(f[i] for f in figures) for i in range(3)]
            index_of = dnd.tables[0].index
            lists = "-" if index_of is None else f"{index_of.index.nlist:,}"
            rows.append((size, index, lists, built, *best, recall(dnd, keys)))
            del dnd

    print(
        f"\nDND, {ACTIONS} actions, D={KEY_SIZE}, k={NEIGHBORS}, keys on a {LATENT}-dimensional "
        f"manifold; ms per call, mean of {args.iterations} (best of {args.repeats}); "
        f"torch threads: {torch.get_num_threads()}"
    )
    print(f"{'size':>9}  {'index':<11}  {'lists':>5}  {'index s':>7}  {'lookup+grad ms':>14}  "
          f"{'acting ms':>9}  {'update ms':>9}  {'recall@50':>9}")  # fmt: skip
    for size, index, lists, built, lookup, acting, update, found in rows:
        building = f"{built:>7.2f}" if index == "approximate" else f"{'-':>7}"
        print(
            f"{size:>9,}  {index:<11}  {lists:>5}  {building}  {lookup * 1e3:>14.2f}  "
            f"{acting * 1e3:>9.2f}  {update * 1e3:>9.2f}  {found:>9.3f}"
        )
    sizes = " ".join(str(s) for s in args.sizes)
    options = (
        "--short"
        if args.short
        else f"--sizes {sizes} --iterations {args.iterations} --repeats {args.repeats}"
    )
    if args.threads is not None:
        options += f" --threads {args.threads}"
    print(f"\nreproduce: python -m benchmarks.dnd {options}")


if __name__ == "__main__":
    main()
