"""What every algorithm's parameters have: a discount and a rhythm of playing and training
(`AlgorithmParameters`), and the checks of them every algorithm shares."""

from __future__ import annotations

from dataclasses import dataclass, field

from coach import validation as check
from coach.core.step_units import EnvironmentSteps
from coach.schedules import Schedule


@dataclass(slots=True, kw_only=True)
class AlgorithmParameters:
    """What every algorithm has: a discount and a rhythm of playing and training."""

    discount: float = 0.99
    """Discount factor of future rewards."""
    num_consecutive_playing_steps: EnvironmentSteps = field(
        default_factory=lambda: EnvironmentSteps(1)
    )
    """Env steps (summed over copies) between two training rounds."""
    num_consecutive_training_steps: int = 1
    """Gradient steps in one training round."""
    batch_size: int = 32
    """Transitions per gradient step."""
    learning_rate_schedule: Schedule | None = None
    """The learning rate of every network the agent trains, over `learning_rate_clock`, set
    before each training round (``None`` keeps each network's own ``learning_rate``): SB3's
    ``learning_rate`` schedule, one rate for all."""
    learning_rate_decay: Schedule | None = None
    """A factor on each network's own ``learning_rate``, over `learning_rate_clock`, set
    before each training round: ``LinearSchedule(1.0, 0.0, N)`` runs every rate down to 0
    over N steps, each from its own value (an actor's and a critic's apart; a tuned or
    overridden ``learning_rate`` is the one that decays). Not with
    ``learning_rate_schedule``."""
    learning_rate_clock: str = "env_steps"
    """What the learning rate's schedule counts: ``"env_steps"``, the env steps acted in
    training (SB3's clock); ``"episodes"``, the episodes finished in heatup and training (the
    unit of an episode budget, ``max_episodes``); ``"training_steps"``, the gradient steps
    (a batch-RL run, which acts no env step: an epoch is the dataset's size over the
    batch size of them). Asynchronous workers count every worker's, summed (the global
    clock); the levels of a hierarchy count the environment's (its env steps and episodes)."""

    def validate(self) -> None:
        validate_rhythm(self)
        check.whole("batch_size", self.batch_size, 1)


LEARNING_RATE_CLOCKS = ("env_steps", "episodes", "training_steps")
"""What `AlgorithmParameters.learning_rate_clock` may count."""


def validate_rhythm(params: AlgorithmParameters) -> None:
    """The checks every algorithm shares: the discount, and the rhythm of playing and
    training (an on-policy batch size follows rules of its own)."""
    check.number("discount", params.discount, 0, 1)
    check.steps(
        "num_consecutive_playing_steps",
        params.num_consecutive_playing_steps,
        (EnvironmentSteps,),
        1,
    )
    check.whole("num_consecutive_training_steps", params.num_consecutive_training_steps, 1)
    if params.learning_rate_schedule is not None:
        check.schedule("learning_rate_schedule", params.learning_rate_schedule, 0)
    check.one_of("learning_rate_clock", params.learning_rate_clock, LEARNING_RATE_CLOCKS)
    if params.learning_rate_decay is not None:
        check.schedule("learning_rate_decay", params.learning_rate_decay, 0)
        if params.learning_rate_schedule is not None:
            raise check.InvalidParameter(
                "learning_rate_decay",
                "must be None where learning_rate_schedule sets the rates (set one of them)",
                params.learning_rate_decay,
            )
