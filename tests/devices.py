"""The devices a device-parametrized test runs on: the CPU always, CUDA wherever a GPU
exists (skipped with the reason elsewhere)."""

from __future__ import annotations

import pytest
import torch

DEVICES = [
    "cpu",
    pytest.param(
        "cuda",
        marks=pytest.mark.skipif(
            not torch.cuda.is_available(), reason="no CUDA device on this machine"
        ),
    ),
]
