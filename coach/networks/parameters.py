"""Parameters that describe a network: embedders per input, a middleware, heads."""

from __future__ import annotations

from dataclasses import dataclass, field

from coach import validation as check
from coach.networks.heads import HeadParameters, QHeadParameters
from coach.validation import InvalidParameter

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
    input_offset: float = 0.0
    """Then this is subtracted (0.5 centres inputs rescaled to [0, 1])."""

    def validate(self) -> None:
        for i, layer in enumerate(self.conv):
            if not (
                isinstance(layer, tuple | list)
                and len(layer) == 3
                and all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in layer)
            ):
                raise InvalidParameter(
                    f"conv.{i}", "must be (out channels, kernel size, stride), each >= 1", layer
                )
        _validate_layers(self.scheme, self.activation)
        check.number("input_rescaling", self.input_rescaling, 0, low_open=True)


def _validate_layers(scheme: list[int], activation: str) -> None:
    """An MLP's layer sizes and activation."""
    from coach.networks.model import ACTIVATIONS  # the model imports these parameters

    for i, size in enumerate(scheme):
        check.whole(f"scheme.{i}", size, 1)
    check.one_of("activation", activation, sorted(ACTIVATIONS))


RECURRENT_CELLS = ("lstm", "gru")
"""The recurrent layers a middleware may start with."""


@dataclass(slots=True, kw_only=True)
class RecurrentParameters:
    """A recurrent layer (LSTM or GRU) over the concatenated embeddings, carrying a hidden
    state from one step of an episode to the next."""

    cell: str = "lstm"
    """``lstm`` (Hochreiter and Schmidhuber, 1997) or ``gru`` (Cho et al., 2014)."""
    size: int = 64
    """Hidden units per layer."""
    layers: int = 1
    """Stacked recurrent layers."""

    def validate(self) -> None:
        check.one_of("cell", self.cell, list(RECURRENT_CELLS))
        check.whole("size", self.size, 1)
        check.whole("layers", self.layers, 1)

    @property
    def state_shape(self) -> tuple[int, int, int]:
        """One copy's hidden state: (parts, layers, size), two parts (h and c) for an LSTM
        and one for a GRU."""
        return (2 if self.cell == "lstm" else 1, self.layers, self.size)


@dataclass(slots=True, kw_only=True)
class MiddlewareParameters:
    """What runs over the concatenated embeddings: an optional recurrent layer, then an
    MLP."""

    scheme: list[int] = field(default_factory=lambda: [64, 64])
    """Hidden layer sizes of the MLP (after the recurrent layer, if any)."""
    activation: str = "relu"
    """Activation after each layer of the MLP."""
    recurrent: RecurrentParameters | None = None
    """An LSTM or GRU first (``None``: feed-forward). A network with one is called on
    sequences with a hidden state per environment copy (`coach.networks.model.Model.unroll`)."""

    def validate(self) -> None:
        _validate_layers(self.scheme, self.activation)
        if self.recurrent is not None and not isinstance(self.recurrent, RecurrentParameters):
            raise InvalidParameter(
                "recurrent", "must be RecurrentParameters(...) or None", self.recurrent
            )


PRECISIONS = ("float32", "bfloat16", "auto")
"""What a network's matrix products may run in (`NetworkParameters.precision`)."""

AUTOCAST_ROWS = 32
"""A ``bfloat16`` network runs learning's batches of this many rows or more in bfloat16:
on fewer rows, casting every weight costs more than the arithmetic it saves."""

COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
"""The ``torch.compile`` modes a network can ask for (`NetworkParameters.compile`)."""


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
    prior_scale: float = 0.0
    """Randomized prior functions (Osband et al., 2018): above 0, every output adds this
    times the output of a frozen twin of the network, drawn at random with it and never
    trained. The twin's weights are buffers: no optimizer, target update or exploration
    noise touches them, and checkpoints hold them. Where the data reach, the network learns
    to offset its prior; where they do not, the prior stays, so the members of an ensemble
    (bootstrapped Q heads, each with its own prior head) keep disagreeing about what no one
    has tried. Feed-forward networks only."""
    compile: str | None = None
    """Run the network through ``torch.compile`` with this mode: ``"default"``,
    ``"reduce-overhead"`` (on CUDA, the compiled graphs replay as CUDA graphs: one launch
    for a whole fixed-shape forward or backward), ``"max-autotune"`` or
    ``"max-autotune-no-cudagraphs"``; ``None`` runs it eagerly. The first steps of each
    shape pay the compilation (tens of seconds on a CPU; cached on disk for the next run).
    On this project's CPU it did not pay for the presets' small MLPs, so no preset turns it
    on."""
    precision: str = "float32"
    """``"bfloat16"``: learning's matrix products (the passes that compute gradients and the
    target copy's, on batches of `AUTOCAST_ROWS` rows or more) run in bfloat16, under
    ``torch.autocast``; the weights, their gradients, the optimizer and the outputs stay
    float32, and acting (no gradients) stays float32, as does an exported policy. A CPU with
    bfloat16 instructions (AVX512-BF16, AMX) and a GPU from Ampere on run those products
    several times faster; elsewhere they are slower. ``"auto"``: bfloat16 where the
    network's device has those instructions, float32 elsewhere. ``"float32"``: all in
    float32."""

    @property
    def recurrent(self) -> RecurrentParameters | None:
        """The middleware's recurrent layer, if it has one."""
        return self.middleware.recurrent

    def validate(self) -> None:
        if not self.input_embedders:
            raise InvalidParameter("input_embedders", "must embed at least one input", {})
        if not self.heads:
            raise InvalidParameter("heads", "must hold at least one head", [])
        names = [head.name for head in self.heads]
        if len(set(names)) < len(names):
            raise InvalidParameter("heads", "must have different names", names)
        check.number("learning_rate", self.learning_rate, 0, why="0 freezes the network")
        check.number("adam_epsilon", self.adam_epsilon, 0, low_open=True)
        check.number("weight_decay", self.weight_decay, 0)
        check.number("prior_scale", self.prior_scale, 0)
        if self.prior_scale > 0 and self.recurrent is not None:
            raise InvalidParameter(
                "prior_scale", "is for feed-forward networks, not recurrent ones", self.prior_scale
            )
        if self.gradient_clip_norm is not None:
            check.number("gradient_clip_norm", self.gradient_clip_norm, 0, low_open=True)
        if self.compile is not None:
            check.one_of("compile", self.compile, COMPILE_MODES)
        check.one_of("precision", self.precision, PRECISIONS)
