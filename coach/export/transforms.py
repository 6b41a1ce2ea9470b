"""The filters of an agent as torch modules, for an exported policy (`coach.export.policy`).

Each supported filter has a twin here that computes what its ``filter`` computes, in the same
dtypes: where numpy works in float64 (a normalization, a linear map of actions) the twin does
too, so that an exported policy gives the agent's own numbers, bit for bit, around its network.
A twin is built from a filter that its pipeline has bound (its output or input space is
known) and reads the state that binding set, its private attributes included; each twin is
tested against its filter (tests/unit/export/test_transforms.py).

A filter without a twin is refused with a `CoachError` that says why: a frame stack keeps
history per environment copy, which a function of one observation cannot; the image filters
compute with OpenCV, whose rounding the exported file would not reproduce; a filter of the
user's own has no known twin.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from coach.errors import CoachError
from coach.filters.action import (
    ActionClipToBounds,
    BoxDiscretization,
    BoxMasking,
    FullDiscreteActionSpaceMap,
    LinearBoxToBoxMap,
    PartialDiscreteActionSpaceMap,
)
from coach.filters.filter import ActionFilter, ObservationFilter
from coach.filters.observation import (
    ObservationClippingFilter,
    ObservationCropFilter,
    ObservationMoveAxisFilter,
    ObservationNormalizationFilter,
    ObservationRescaleToSizeFilter,
    ObservationRGBToLuminanceFilter,
    ObservationSelectEntriesFilter,
    ObservationSqueezeFilter,
    ObservationToUInt8Filter,
)


def torch_dtype(dtype: Any) -> torch.dtype:
    """The torch dtype of a numpy dtype."""
    return torch.from_numpy(np.empty(0, dtype=np.dtype(dtype))).dtype


def _constant(array: Any, dtype: Any = None) -> torch.Tensor:
    """A numpy array (copied) as a tensor of its own dtype, or of ``dtype``."""
    return torch.from_numpy(np.array(array, dtype=dtype, copy=True))


class Normalize(nn.Module):
    """`ObservationNormalizationFilter` with its statistics frozen: in float64, then clipped
    and made float32."""

    def __init__(self, f: ObservationNormalizationFilter) -> None:
        super().__init__()
        if f.stats is None:
            raise CoachError("ObservationNormalizationFilter has no statistics to export")
        self.mean: torch.Tensor
        self.register_buffer("mean", _constant(f.stats.mean, np.float64))
        self.std: torch.Tensor
        self.register_buffer("std", _constant(np.sqrt(f.stats.var + f.epsilon), np.float64))
        self.clip = float(f.clip)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        normalized = (x.double() - self.mean) / self.std
        return torch.clamp(normalized, -self.clip, self.clip).float()


class Clip(nn.Module):
    """`ObservationClippingFilter`: clipped, in the observation's dtype."""

    def __init__(self, f: ObservationClippingFilter) -> None:
        super().__init__()
        self.low, self.high = float(f.clipping_low), float(f.clipping_high)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(x, self.low, self.high).to(x.dtype)


class Crop(nn.Module):
    """`ObservationCropFilter`: a slice of every axis but the batch's."""

    def __init__(self, f: ObservationCropFilter) -> None:
        super().__init__()
        assert f._slices is not None, "bound by its pipeline"
        self.bounds = [(s.start, s.stop) for s in f._slices]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for axis, (start, stop) in enumerate(self.bounds, start=1):
            x = x.narrow(axis, start, stop - start)
        return x


class MoveAxis(nn.Module):
    """`ObservationMoveAxisFilter`: one axis moved."""

    def __init__(self, f: ObservationMoveAxisFilter) -> None:
        super().__init__()
        assert f._axes is not None, "bound by its pipeline"
        self.origin, self.target = f._axes

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.movedim(x, self.origin, self.target).contiguous()


class SelectEntries(nn.Module):
    """`ObservationSelectEntriesFilter`: some entries of the last axis."""

    def __init__(self, f: ObservationSelectEntriesFilter) -> None:
        super().__init__()
        assert f._kept is not None, "bound by its pipeline"
        self.kept: torch.Tensor
        self.register_buffer("kept", _constant(f._kept, np.int64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.index_select(-1, self.kept)


class Squeeze(nn.Module):
    """`ObservationSqueezeFilter`: axes of size one removed."""

    def __init__(self, f: ObservationSqueezeFilter) -> None:
        super().__init__()
        assert f._axes is not None, "bound by its pipeline"
        self.axes = f._axes

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for axis in sorted(self.axes, reverse=True):
            x = x.squeeze(axis)
        return x


class ToUInt8(nn.Module):
    """`ObservationToUInt8Filter`: clipped and scaled in float64, rounded half to even."""

    def __init__(self, f: ObservationToUInt8Filter) -> None:
        super().__init__()
        self.low, self.high = float(f.input_low), float(f.input_high)
        self.scale = 255.0 / (self.high - self.low)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        clipped = torch.clamp(x.double(), self.low, self.high)
        return torch.round((clipped - self.low) * self.scale).to(torch.uint8)


OBSERVATION_TWINS: dict[type[ObservationFilter], type[nn.Module]] = {
    ObservationNormalizationFilter: Normalize,
    ObservationClippingFilter: Clip,
    ObservationCropFilter: Crop,
    ObservationMoveAxisFilter: MoveAxis,
    ObservationSelectEntriesFilter: SelectEntries,
    ObservationSqueezeFilter: Squeeze,
    ObservationToUInt8Filter: ToUInt8,
}
"""The observation filters an exported policy folds in, and their twins."""


def observation_transform(f: ObservationFilter) -> nn.Module:
    """The twin of a bound observation filter.

    Raises:
        CoachError: the filter has none (see the module's docstring for why).
    """
    twin = OBSERVATION_TWINS.get(type(f))
    if twin is not None:
        return twin(f)
    name = type(f).__name__
    if f.per_copy_state:
        raise CoachError(
            f"{name} keeps history per environment copy (a frame stack): the policy is no "
            f"function of one observation and cannot be exported as one"
        )
    if isinstance(f, ObservationRescaleToSizeFilter | ObservationRGBToLuminanceFilter):
        raise CoachError(
            f"{name} computes with OpenCV, whose rounding an exported policy would not "
            f"reproduce: a policy behind it cannot be exported"
        )
    raise CoachError(
        f"{name} has no exported form; the observation filters that do: "
        f"{', '.join(sorted(t.__name__ for t in OBSERVATION_TWINS))}"
    )


class LinearMap(nn.Module):
    """`LinearBoxToBoxMap`: the agent's box onto the environment's, in float64."""

    def __init__(self, f: LinearBoxToBoxMap) -> None:
        super().__init__()
        assert f._agent_low is not None, "bound by its pipeline"
        self.agent_low: torch.Tensor
        self.register_buffer("agent_low", _constant(f._agent_low, np.float64))
        self.agent_width: torch.Tensor
        self.register_buffer("agent_width", _constant(f._agent_width, np.float64))
        self.env_low: torch.Tensor
        self.register_buffer("env_low", _constant(f._env_low, np.float64))
        self.env_high: torch.Tensor
        self.register_buffer("env_high", _constant(f._env_high, np.float64))
        self.dtype = torch_dtype(f._dtype)

    def forward(self, action: torch.Tensor) -> torch.Tensor:
        t = (action.double() - self.agent_low) / self.agent_width
        return (self.env_low * (1.0 - t) + self.env_high * t).to(self.dtype)


class ClipToBounds(nn.Module):
    """`ActionClipToBounds`: clipped into the environment's box, in its dtype."""

    def __init__(self, f: ActionClipToBounds) -> None:
        super().__init__()
        assert f._low is not None, "bound by its pipeline"
        self.low: torch.Tensor
        self.register_buffer("low", _constant(f._low))
        self.high: torch.Tensor
        self.register_buffer("high", _constant(f._high))
        self.dtype = torch_dtype(f._dtype)

    def forward(self, action: torch.Tensor) -> torch.Tensor:
        return torch.clamp(action, self.low, self.high).to(self.dtype)


class Shift(nn.Module):
    """`BoxMasking`: shifted into the mask, in float64."""

    def __init__(self, f: BoxMasking) -> None:
        super().__init__()
        assert f._offset is not None, "bound by its pipeline"
        self.offset: torch.Tensor
        self.register_buffer("offset", _constant(f._offset, np.float64))
        self.dtype = torch_dtype(f._dtype)

    def forward(self, action: torch.Tensor) -> torch.Tensor:
        return (action.double() + self.offset).to(self.dtype)


class Lookup(nn.Module):
    """`BoxDiscretization` and `PartialDiscreteActionSpaceMap`: the environment's action
    of each index, from the filter's table."""

    def __init__(self, f: BoxDiscretization | PartialDiscreteActionSpaceMap) -> None:
        super().__init__()
        table = f.points if isinstance(f, BoxDiscretization) else f.table
        assert table is not None, "bound by its pipeline"
        self.table: torch.Tensor
        self.register_buffer("table", _constant(table))

    def forward(self, action: torch.Tensor) -> torch.Tensor:
        return self.table.index_select(0, action.long())


class Offset(nn.Module):
    """`FullDiscreteActionSpaceMap`: the index plus the environment's start."""

    def __init__(self, f: FullDiscreteActionSpaceMap) -> None:
        super().__init__()
        self.start = int(f.start)

    def forward(self, action: torch.Tensor) -> torch.Tensor:
        return action.long() + self.start


ACTION_TWINS: dict[type[ActionFilter], type[nn.Module]] = {
    LinearBoxToBoxMap: LinearMap,
    ActionClipToBounds: ClipToBounds,
    BoxMasking: Shift,
    BoxDiscretization: Lookup,
    PartialDiscreteActionSpaceMap: Lookup,
    FullDiscreteActionSpaceMap: Offset,
}
"""The action filters an exported policy folds in, and their twins."""


def action_transform(f: ActionFilter) -> nn.Module:
    """The twin of a bound action filter.

    Raises:
        CoachError: the filter has none.
    """
    twin = ACTION_TWINS.get(type(f))
    if twin is None:
        raise CoachError(
            f"{type(f).__name__} has no exported form; the action filters that do: "
            f"{', '.join(sorted(t.__name__ for t in ACTION_TWINS))}"
        )
    return twin(f)
