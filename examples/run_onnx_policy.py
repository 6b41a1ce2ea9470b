"""Run a policy that ``coach export`` wrote, with onnxruntime and numpy alone (no torch, no
Coach): a few observations drawn at random, and the action the policy takes for each.

    python examples/run_onnx_policy.py experiments/Pendulum_SAC/<timestamp>/export/policy.onnx

The file takes one float32 input per observation key, shaped (N, ...), and gives
``action``: int64 for an environment of integer actions, float32 for continuous ones, in the
environment's own terms (the agent's filters are folded in).
"""

from __future__ import annotations

import sys

import numpy as np
import onnxruntime as ort


def main(path: str, count: int = 5) -> None:
    session = ort.InferenceSession(path)
    rng = np.random.default_rng(0)
    # An input's shape is ("batch", ...); observations in [-1, 1] fit most classic tasks.
    observations = {
        spec.name: rng.uniform(-1.0, 1.0, (count, *spec.shape[1:])).astype(np.float32)
        for spec in session.get_inputs()
    }
    (actions,) = session.run(["action"], observations)
    for i, action in enumerate(actions):
        seen = "  ".join(f"{name}={np.round(o[i], 3).tolist()}" for name, o in observations.items())
        print(f"{seen}  ->  action={np.round(action, 4).tolist()}")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: python run_onnx_policy.py POLICY.onnx [COUNT]")
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 5)
