"""What a preset promises: `PresetValidation`, the reward (or success rate) an evaluation
reaches within a budget, which ``make golden`` and the benchmark pages judge."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from coach.errors import CoachError


@dataclass(slots=True, kw_only=True)
class PresetValidation:
    """What a preset promises: the evaluation reward (or success rate) it reaches, and
    within what budget; or, for a baseline, the success rate it stays below."""

    min_reward: float | None = None
    """The evaluation mean reward to reach."""
    min_success_rate: float | None = None
    """The evaluation success rate to reach (goal-based environments)."""
    max_success_rate: float | None = None
    """The success rate no evaluation may exceed within the budget (a baseline that shows
    what a method adds, e.g. DQN without hindsight replay)."""
    max_reward: float | None = None
    """The mean reward no evaluation may exceed within the budget (a baseline, e.g. DDQN on
    the dataset BCQ learns from)."""
    max_env_steps: int | None = None
    """Training env steps within which it is reached."""
    max_episodes: int | None = None
    """Training episodes within which it is reached."""
    max_epochs: int | None = None
    """Epochs over the dataset within which it is reached (batch RL)."""
    seeds: tuple[int, ...] = (0, 1, 2)
    """Seeds on which the golden runs check it: every promise holds on three."""
    baselines: str | None = None
    """Scripted players the golden tests measure the promise against, on the same seeds
    (``simple_spread``: a uniformly random policy and a greedy-assignment one; ``tictactoe``:
    a random and a minimax player, each played 200 games as either side by ``best.pt``)."""
    gap_closed: float | None = None
    """With ``baselines``: the fraction of the gap from the weaker baseline's evaluation
    return to the stronger one's that an evaluation must close (`resolved` makes it the
    ``min_reward``)."""
    per_agent: int = 1
    """How many agents' returns the evaluation's reward sums (a team's); the baselines and
    the table are per agent."""

    def __post_init__(self) -> None:
        if self.gap_closed is not None and self.baselines is None:
            raise CoachError(
                "a PresetValidation's gap_closed needs the baselines it is measured on"
            )
        if (
            self.min_reward is None
            and self.min_success_rate is None
            and self.max_success_rate is None
            and self.max_reward is None
            and self.gap_closed is None
        ):
            raise CoachError(
                "a PresetValidation needs min_reward, min_success_rate, gap_closed or a ceiling"
            )

    def resolved(self, low: float, high: float) -> PresetValidation:
        """The promise once the baselines' per-agent returns are known: ``min_reward`` (the
        team's) closes ``gap_closed`` of the gap from ``low`` to ``high``."""
        assert self.gap_closed is not None
        per_agent = low + self.gap_closed * (high - low)
        return dataclasses.replace(self, min_reward=self.per_agent * per_agent)

    def reached(self, mean_reward: float, success_rate: float) -> bool:
        """Whether an evaluation meets the promised reward and success rate."""
        if self.min_reward is None and self.min_success_rate is None:
            return False  # only a ceiling: nothing to reach
        return (self.min_reward is None or mean_reward >= self.min_reward) and (
            self.min_success_rate is None or success_rate >= self.min_success_rate
        )

    def kept(self, mean_reward: float, success_rate: float) -> bool:
        """Whether an evaluation keeps the promise: reaches what it must reach (if anything)
        and breaks no ceiling."""
        floor = self.min_reward is not None or self.min_success_rate is not None
        return (not floor or self.reached(mean_reward, success_rate)) and not self.broken(
            success_rate, mean_reward
        )

    def ceiling(self) -> bool:
        """A baseline's promise: to stay below a reward or success rate."""
        return self.max_success_rate is not None or self.max_reward is not None

    def broken(self, success_rate: float, mean_reward: float = float("-inf")) -> bool:
        """Whether an evaluation went above the ceiling."""
        return (self.max_success_rate is not None and success_rate > self.max_success_rate) or (
            self.max_reward is not None and mean_reward > self.max_reward
        )

    def describe_budget(self) -> str:
        """The budgets it declares, in words ("50,000 env steps and 300 episodes")."""
        budgets = [
            (self.max_env_steps, "env steps"),
            (self.max_episodes, "episodes"),
            (self.max_epochs, "epochs"),
        ]
        return " and ".join(f"{n:,} {unit}" for n, unit in budgets if n is not None)

    def describe(self) -> str:
        """The promise in a few characters, for tables."""
        parts = []
        if self.min_reward is not None and self.per_agent > 1:
            parts.append(f"{self.min_reward / self.per_agent:.2f}/agent")
        elif self.min_reward is not None:
            parts.append(f"{self.min_reward:g}")
        elif self.gap_closed is not None:
            parts.append(f"{self.gap_closed:.0%} of {self.baselines} gap")
        if self.min_success_rate is not None:
            parts.append(f"success>={self.min_success_rate:g}")
        if self.max_success_rate is not None:
            parts.append(f"success<={self.max_success_rate:g}")
        if self.max_reward is not None:
            parts.append(f"<={self.max_reward:g}")
        return " ".join(parts)
