"""Batch RL: learning from a stored dataset instead of acting.

- `coach.batch.episodes`: the records, an `Episode` and a loaded `Dataset`;
- `coach.batch.datasets`: reading and writing them as local Minari datasets, and flattening
  them into transitions;
- `coach.batch.checks`: what a dataset must be (spaces Coach can use, episodes that fit them);
- `coach.batch.ids`: dataset ids (new, local, unknown);
- `coach.batch.ope`: off-policy evaluation (IPS, DM, DR, WIS, SDR);
- `coach.batch.graph_manager`: `BatchRLGraphManager`, training in epochs over a dataset;
- `coach.batch.recording`: recording a run's episodes into a dataset (``--record-dataset``).
"""
