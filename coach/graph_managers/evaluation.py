"""What an evaluation gives back: the episodes it scored (`EvaluationResult`), collected
step by step and split evenly over the environment copies (`EvaluationEpisodes`).

The graph manager runs the evaluations (`GraphManager.evaluate`), an evaluation worker may
run them aside (`coach.parallel.worker`); both collect and report with these.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from coach.core.step_units import EnvironmentEpisodes, StepUnit
from coach.core.types import EnvResponse


@dataclass(slots=True)
class EvaluationResult:
    """The episodes of one evaluation period."""

    env_steps: int
    """The run's training env steps when the evaluation ran."""
    rewards: list[float]
    """Each episode's undiscounted return."""
    lengths: list[int]
    """Each episode's length."""
    successes: list[float] = field(default_factory=list)
    """Each episode's ``is_success`` (goal-based environments report it in the last step's
    info); empty when the environment reports none."""

    @property
    def mean_reward(self) -> float:
        return float(np.mean(self.rewards)) if self.rewards else float("nan")

    @property
    def success_rate(self) -> float:
        """The fraction of episodes that reached their goal (nan without successes)."""
        return float(np.mean(self.successes)) if self.successes else float("nan")


class EvaluationEpisodes:
    """Collects the finished episodes of an evaluation.

    With an episode budget of ``n`` over ``num_envs`` copies, copy ``i`` contributes its first
    ``(n + i) // num_envs`` episodes: short episodes, which end first, are not favoured.
    With a step budget every finished episode counts.
    """

    def __init__(self, budget: StepUnit, num_envs: int) -> None:
        self.by_episodes = isinstance(budget, EnvironmentEpisodes)
        self.quota = [(budget.num_steps + i) // num_envs for i in range(num_envs)]
        self.counts = [0] * num_envs
        self.rewards: list[float] = []
        self.lengths: list[int] = []
        self.successes: list[float] = []

    def record(self, response: EnvResponse) -> bool:
        """Take a step's finished episodes; true once every copy has run its share."""
        for i in np.flatnonzero(response.terminated | response.truncated):
            if self.by_episodes and self.counts[i] >= self.quota[i]:
                continue
            self.counts[i] += 1
            self.rewards.append(float(response.episode_return[i]))
            self.lengths.append(int(response.episode_length[i]))
            info = response.infos[i] if response.infos else {}
            if "is_success" in info:
                self.successes.append(float(info["is_success"]))
        return self.by_episodes and self.counts == self.quota
