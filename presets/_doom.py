"""What the Doom presets that learn from the screen with a value network share: the screen
as 84x84 luminance in a stack of 4 (the Atari filters), rewards divided by 100, and the
Nature CNN with 512 units before the head. Not a preset itself (its name starts with an
underscore).
"""

from __future__ import annotations

from coach import InputEmbedderParameters, InputFilter, MiddlewareParameters, NetworkParameters
from coach.filters.atari import atari_input_filter
from coach.filters.reward.rescale import RewardRescaleFilter
from coach.networks import HeadParameters
from coach.networks.parameters import NATURE_CNN


def input_filter() -> InputFilter:
    """The screen through the Atari filters (from RGB), rewards divided by 100."""
    screen = atari_input_filter(obs_type="rgb", clip_rewards=False)
    screen.reward_filters = [RewardRescaleFilter(1 / 100)]
    return screen


def network(
    head: HeadParameters, learning_rate: float, create_target_network: bool = True
) -> NetworkParameters:
    """The Nature CNN over the screen, 512 units, and the given head."""
    return NetworkParameters(
        input_embedders={
            "observation": InputEmbedderParameters(conv=NATURE_CNN, input_rescaling=255.0)
        },
        middleware=MiddlewareParameters(scheme=[512]),
        heads=[head],
        learning_rate=learning_rate,
        create_target_network=create_target_network,
    )
