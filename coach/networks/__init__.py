"""Networks: embedders keyed by observation name, middlewares, heads, online/target copies."""

from coach.networks.distributions import CategoricalDistribution, GaussianDistribution
from coach.networks.future_heads import FutureMeasurementsHeadParameters
from coach.networks.heads import (
    BootstrappedQHeadParameters,
    CategoricalPolicyHeadParameters,
    CategoricalQHeadParameters,
    DeterministicPolicyHeadParameters,
    GaussianPolicyHeadParameters,
    HeadParameters,
    KeyHeadParameters,
    NoisyLinear,
    QHeadParameters,
    QuantileQHeadParameters,
    VHeadParameters,
)
from coach.networks.model import Model
from coach.networks.network_wrapper import NetworkWrapper
from coach.networks.parameters import (
    InputEmbedderParameters,
    MiddlewareParameters,
    NetworkParameters,
    RecurrentParameters,
)

__all__ = [
    "BootstrappedQHeadParameters",
    "CategoricalDistribution",
    "CategoricalPolicyHeadParameters",
    "CategoricalQHeadParameters",
    "DeterministicPolicyHeadParameters",
    "FutureMeasurementsHeadParameters",
    "GaussianDistribution",
    "GaussianPolicyHeadParameters",
    "HeadParameters",
    "InputEmbedderParameters",
    "KeyHeadParameters",
    "MiddlewareParameters",
    "Model",
    "NetworkParameters",
    "NetworkWrapper",
    "NoisyLinear",
    "QHeadParameters",
    "QuantileQHeadParameters",
    "RecurrentParameters",
    "VHeadParameters",
]
