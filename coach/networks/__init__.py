"""Networks: embedders keyed by observation name, middlewares, heads, online/target copies."""

from coach.networks.model import Model
from coach.networks.network_wrapper import NetworkWrapper
from coach.networks.parameters import (
    HeadParameters,
    InputEmbedderParameters,
    MiddlewareParameters,
    NetworkParameters,
    QHeadParameters,
)

__all__ = [
    "HeadParameters",
    "InputEmbedderParameters",
    "MiddlewareParameters",
    "Model",
    "NetworkParameters",
    "NetworkWrapper",
    "QHeadParameters",
]
