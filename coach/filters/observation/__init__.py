"""Observation filters: each transforms one key of a batch of observations (and
`ObservationSelectKeysFilter` the whole dictionary)."""

from coach.filters.observation.clipping import ObservationClippingFilter
from coach.filters.observation.crop import ObservationCropFilter
from coach.filters.observation.move_axis import ObservationMoveAxisFilter
from coach.filters.observation.normalization import ObservationNormalizationFilter
from coach.filters.observation.rescale import ObservationRescaleToSizeFilter
from coach.filters.observation.rgb_to_luminance import ObservationRGBToLuminanceFilter
from coach.filters.observation.select_entries import ObservationSelectEntriesFilter
from coach.filters.observation.select_keys import ObservationSelectKeysFilter
from coach.filters.observation.squeeze import ObservationSqueezeFilter
from coach.filters.observation.to_uint8 import ObservationToUInt8Filter

__all__ = [
    "ObservationClippingFilter",
    "ObservationCropFilter",
    "ObservationMoveAxisFilter",
    "ObservationNormalizationFilter",
    "ObservationRGBToLuminanceFilter",
    "ObservationRescaleToSizeFilter",
    "ObservationSelectEntriesFilter",
    "ObservationSelectKeysFilter",
    "ObservationSqueezeFilter",
    "ObservationToUInt8Filter",
]
