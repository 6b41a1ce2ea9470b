"""Parameters that describe a network: embedders per input, a middleware, heads."""

from __future__ import annotations

from dataclasses import dataclass, field

from coach.networks.heads import HeadParameters, QHeadParameters

NATURE_CNN: list[tuple[int, int, int]] = [(32, 8, 4), (64, 4, 2), (64, 3, 1)]
"""The convolutions of Mnih et al. 2015 (channels, kernel, stride), for 84x84 frames."""


@dataclass(slots=True, kw_only=True)
class InputEmbedderParameters:
    """How one observation key is embedded: optional convolutions (images), flattened, then
    an optional MLP."""

    conv: list[tuple[int, int, int]] = field(default_factory=list)
    """Convolutions as (out channels, kernel size, stride), each followed by the activation;
    the input is ``(channels, height, width)`` (a stack of frames) or ``(height, width)``.
    Empty for vector inputs; `NATURE_CNN` for Atari."""
    scheme: list[int] = field(default_factory=list)
    """Hidden layer sizes of the embedder's MLP; empty flattens the input as it is."""
    activation: str = "relu"
    """Activation between layers: relu, tanh, elu, gelu, leaky_relu or silu."""
    input_rescaling: float = 1.0
    """The input is divided by this first (255 for uint8 images)."""


@dataclass(slots=True, kw_only=True)
class MiddlewareParameters:
    """The MLP over the concatenated embeddings."""

    scheme: list[int] = field(default_factory=lambda: [64, 64])
    """Hidden layer sizes."""
    activation: str = "relu"
    """Activation after each layer."""


@dataclass(slots=True, kw_only=True)
class NetworkParameters:
    """A network: what it reads, its layers, its heads, and how it is optimized."""

    input_embedders: dict[str, InputEmbedderParameters] = field(
        default_factory=lambda: {"observation": InputEmbedderParameters()}
    )
    """One embedder per observation key the network reads."""
    middleware: MiddlewareParameters = field(default_factory=MiddlewareParameters)
    """The layers over the concatenated embeddings."""
    heads: list[HeadParameters] = field(default_factory=lambda: [QHeadParameters()])
    """The outputs."""
    learning_rate: float = 1e-3
    """Adam's step size."""
    adam_epsilon: float = 1e-8
    """Adam's epsilon."""
    weight_decay: float = 0.0
    """L2 penalty (AdamW's decoupled weight decay)."""
    gradient_clip_norm: float | None = None
    """Clip the global gradient norm to this value; ``None`` does not clip."""
    create_target_network: bool = False
    """Keep a slowly updated copy of the network for bootstrapped targets."""
