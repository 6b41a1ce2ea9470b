"""Unit tests for coach/export/files.py: a policy whose code fixes the batch size is refused
in either format, rather than written as a file that runs at the example's batch alone."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

from coach.errors import CoachError
from coach.export.files import write_onnx, write_torchscript


class FixedBatch(nn.Module):
    """Reads the batch size as a number, as a head that allocates with ``len(x)`` or
    ``int(x.shape[0])`` does: traced or exported, the size of the example stays."""

    keys = ["observation"]

    def example_inputs(self, batch: int = 2) -> tuple[torch.Tensor, ...]:
        return (torch.zeros(batch, 3),)

    def forward(self, observation: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(int(observation.shape[0]), 1)
        return out + observation.sum(dim=1, keepdim=True)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("write", [write_onnx, write_torchscript])
def test_a_policy_that_fixes_its_batch_size_is_refused(write: object, tmp_path: Path) -> None:
    path = tmp_path / "policy"
    with pytest.raises(CoachError, match="batch"):
        write(FixedBatch(), path)  # type: ignore[operator]
    assert not path.exists()
