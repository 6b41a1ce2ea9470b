"""Pieces that every learning side uses, as functions: a sampled batch on the device, and
the one-step TD target."""

from __future__ import annotations

import torch

from coach.core.types import Batch


def on_device(batch: Batch, device: torch.device) -> Batch:
    """A sampled batch as tensors on ``device``."""
    return batch.map(lambda a: torch.as_tensor(a, device=device))


def td_targets(
    rewards: torch.Tensor,
    discount: torch.Tensor | float,
    terminated: torch.Tensor,
    next_values: torch.Tensor,
) -> torch.Tensor:
    """``r + discount * V(s')``, the bootstrap dropped only where the episode terminated (a
    truncation still bootstraps), (B,)."""
    return rewards + discount * (1.0 - terminated.float()) * next_values
