"""Networks: embedders keyed by observation name, middlewares, heads, online/target copies."""

from coach.networks.heads import (
    BootstrappedQHeadParameters,
    CategoricalQHeadParameters,
    HeadParameters,
    NoisyLinear,
    QHeadParameters,
    QuantileQHeadParameters,
)
from coach.networks.model import Model
from coach.networks.network_wrapper import NetworkWrapper
from coach.networks.parameters import (
    InputEmbedderParameters,
    MiddlewareParameters,
    NetworkParameters,
)

__all__ = [
    "BootstrappedQHeadParameters",
    "CategoricalQHeadParameters",
    "HeadParameters",
    "InputEmbedderParameters",
    "MiddlewareParameters",
    "Model",
    "NetworkParameters",
    "NetworkWrapper",
    "NoisyLinear",
    "QHeadParameters",
    "QuantileQHeadParameters",
]
