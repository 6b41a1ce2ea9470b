"""Off-policy evaluation: how good an evaluated policy ``pi_e`` is, from data logged by ``pi_b``.

Batch RL learns a policy from a stored dataset; before it is deployed, these estimators say
what it is worth using only that dataset, as in the original Coach's
``rl_coach/off_policy_evaluators``. With the importance ratio
``rho_t = pi_e(a_t | s_t) / pi_b(a_t | s_t)`` of the logged action:

One-step ("contextual bandit") estimators treat every transition on its own and estimate
``E_{s ~ data}[sum_a pi_e(a | s) r(s, a)]``, the expected immediate reward of ``pi_e`` on the
dataset's states, averaging over all transitions of all episodes:

- Inverse propensity scoring, IPS (Horvitz and Thompson, 1952): ``mean_t rho_t r_t``.
  Unbiased, but its variance grows with the ratios.
- Direct method, DM: ``mean_t sum_a pi_e(a | s_t) rhat(s_t, a)`` with a learned reward model
  ``rhat``. Low variance, but as biased as the model is wrong.
- Doubly robust, DR (Dudík, Langford and Li, 2011, "Doubly Robust Policy Evaluation and
  Learning"): DM plus ``mean_t rho_t (r_t - rhat(s_t, a_t))``, the importance-weighted error
  of the model. Unbiased when either the ratios or the model are right.

Episodic estimators estimate the discounted return ``G = sum_t discount^t r_t`` of ``pi_e``
from an episode's first state:

- Weighted importance sampling, WIS (Precup, Sutton and Singh, 2000, "Eligibility Traces for
  Off-Policy Policy Evaluation"): each episode weighs ``w_i = prod_t rho_t``, and
  ``WIS = sum_i w_i G_i / sum_i w_i``. Biased for few episodes but consistent, and far less
  variable than the unnormalised average.
- Sequential doubly robust, SDR (Jiang and Li, 2016, "Doubly Robust Off-policy Value
  Evaluation for Reinforcement Learning"): DR applied backwards through each episode with a
  learned ``Qhat`` of ``pi_e``, then averaged over episodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from coach.errors import CoachError

_ROW_SUM_TOLERANCE = 1e-4
"""How far a row of ``target_probabilities`` may sum from 1 (models emit float32 softmaxes)."""


@dataclass(slots=True)
class OPEEpisode:
    """One logged episode, with what the estimators need per step (T steps, A actions).

    The arrays are converted with `numpy.asarray` and checked at construction: a mistake in
    how the dataset was assembled raises `CoachError` here rather than skewing an estimate.
    """

    actions: np.ndarray
    """The logged actions, shape (T,), integer indices in ``[0, A)``."""
    rewards: np.ndarray
    """The logged rewards, shape (T,)."""
    behaviour_probabilities: np.ndarray
    """``pi_b(a_t | s_t)`` of the logged action, shape (T,), in ``(0, 1]``."""
    target_probabilities: np.ndarray
    """``pi_e(. | s_t)``, shape (T, A), each row summing to 1."""
    reward_model: np.ndarray
    """A learned ``rhat(s_t, a)`` for every action, shape (T, A)."""
    q_values: np.ndarray
    """A learned ``Qhat(s_t, a)`` of the evaluated policy for every action, shape (T, A)."""

    def __post_init__(self) -> None:
        self.actions = np.asarray(self.actions)
        self.rewards = np.asarray(self.rewards, dtype=np.float64)
        self.behaviour_probabilities = np.asarray(self.behaviour_probabilities, dtype=np.float64)
        self.target_probabilities = np.asarray(self.target_probabilities, dtype=np.float64)
        self.reward_model = np.asarray(self.reward_model, dtype=np.float64)
        self.q_values = np.asarray(self.q_values, dtype=np.float64)

        if self.actions.ndim != 1 or len(self.actions) == 0:
            raise CoachError(
                f"OPEEpisode.actions must have shape (T,) with T >= 1 steps, "
                f"got shape {self.actions.shape}"
            )
        steps = len(self.actions)
        if self.target_probabilities.ndim != 2 or self.target_probabilities.shape[0] != steps:
            raise CoachError(
                f"OPEEpisode.target_probabilities must have shape (T, A) = ({steps}, A) like "
                f"actions {self.actions.shape}, got shape {self.target_probabilities.shape}"
            )
        num_actions = self.target_probabilities.shape[1]
        for name, array, shape in (
            ("rewards", self.rewards, (steps,)),
            ("behaviour_probabilities", self.behaviour_probabilities, (steps,)),
            ("reward_model", self.reward_model, (steps, num_actions)),
            ("q_values", self.q_values, (steps, num_actions)),
        ):
            if array.shape != shape:
                raise CoachError(
                    f"OPEEpisode.{name} must have shape {shape} (T = {steps} steps from actions, "
                    f"A = {num_actions} actions from target_probabilities), got {array.shape}"
                )
            if not np.all(np.isfinite(array)):
                raise CoachError(f"OPEEpisode.{name} must be finite, got {array}")

        if not np.issubdtype(self.actions.dtype, np.integer):
            raise CoachError(
                f"OPEEpisode.actions must hold integer action indices, got dtype "
                f"{self.actions.dtype}"
            )
        if np.any((self.actions < 0) | (self.actions >= num_actions)):
            raise CoachError(
                f"OPEEpisode.actions must be indices in [0, {num_actions}) (the columns of "
                f"target_probabilities), got {self.actions}"
            )
        behaviour = self.behaviour_probabilities
        if not np.all((behaviour > 0) & (behaviour <= 1)):
            raise CoachError(
                f"OPEEpisode.behaviour_probabilities must be in (0, 1]: the logged action had "
                f"to be possible under the behaviour policy, got {behaviour}"
            )
        target = self.target_probabilities
        row_sums = target.sum(axis=1)
        if not np.all(target >= 0) or not np.all(np.abs(row_sums - 1) <= _ROW_SUM_TOLERANCE):
            raise CoachError(
                f"OPEEpisode.target_probabilities must be non-negative with rows summing to 1 "
                f"(within {_ROW_SUM_TOLERANCE}), got row sums {row_sums} for shape {target.shape}"
            )


@dataclass(slots=True)
class OPEEstimates:
    """What each estimator says the evaluated policy is worth."""

    ips: float
    """Inverse propensity scoring: per-step expected reward of ``pi_e``."""
    dm: float
    """Direct method: per-step expected reward of ``pi_e``."""
    dr: float
    """Doubly robust: per-step expected reward of ``pi_e``."""
    wis: float
    """Weighted importance sampling: discounted episode return of ``pi_e`` (nan if no weight)."""
    sdr: float
    """Sequential doubly robust: discounted episode return of ``pi_e``."""

    def as_dict(self) -> dict[str, float]:
        """The estimates keyed by their short names, for logging."""
        return {"ips": self.ips, "dm": self.dm, "dr": self.dr, "wis": self.wis, "sdr": self.sdr}


def estimate(episodes: Sequence[OPEEpisode], discount: float) -> OPEEstimates:
    """All five estimates of the evaluated policy from the same logged episodes.

    Args:
        episodes: The logged episodes, at least one.
        discount: The discount of the episodic estimators (WIS and SDR), in ``[0, 1]``.
    """
    return OPEEstimates(
        ips=inverse_propensity_scoring(episodes),
        dm=direct_method(episodes),
        dr=doubly_robust(episodes),
        wis=weighted_importance_sampling(episodes, discount),
        sdr=sequential_doubly_robust(episodes, discount),
    )


def inverse_propensity_scoring(episodes: Sequence[OPEEpisode]) -> float:
    """IPS: ``mean_t rho_t r_t`` over all transitions, the per-step expected reward of pi_e."""
    steps = _Steps.of(episodes)
    return float(np.mean(steps.ratios * steps.rewards))


def direct_method(episodes: Sequence[OPEEpisode]) -> float:
    """DM: ``mean_t sum_a pi_e(a | s_t) rhat(s_t, a)`` over all transitions."""
    steps = _Steps.of(episodes)
    return float(np.mean(steps.expected(steps.reward_model)))


def doubly_robust(episodes: Sequence[OPEEpisode]) -> float:
    """DR: DM plus ``mean_t rho_t (r_t - rhat(s_t, a_t))``, the weighted error of the model."""
    steps = _Steps.of(episodes)
    correction = steps.ratios * (steps.rewards - steps.logged(steps.reward_model))
    return float(np.mean(steps.expected(steps.reward_model) + correction))


def weighted_importance_sampling(episodes: Sequence[OPEEpisode], discount: float) -> float:
    """WIS: ``sum_i w_i G_i / sum_i w_i`` with ``w_i = prod_t rho_t`` over episode ``i``.

    The weights are products of hundreds of ratios in long episodes, so they are summed as
    logarithms and rescaled by the largest before leaving log space: positive weights never
    overflow to inf nor underflow to a 0 / 0.

    Returns:
        The estimated discounted return of pi_e from the first state, or ``nan`` when every
        weight is 0 (in every episode pi_e gives probability 0 to some logged action): the
        data then says nothing about pi_e.
    """
    _check_discount(discount)
    steps = _Steps.of(episodes)
    with np.errstate(divide="ignore"):  # a zero ratio is a weight of 0: log -inf
        log_weights = steps.per_episode_sum(np.log(steps.ratios))
    largest = log_weights.max()
    if largest == -np.inf:
        return float("nan")
    weights = np.exp(log_weights - largest)
    returns = steps.per_episode_sum(discount**steps.time * steps.rewards)
    return float(weights @ returns / weights.sum())


def sequential_doubly_robust(episodes: Sequence[OPEEpisode], discount: float) -> float:
    """SDR: the mean over episodes of ``V_DR`` at their first step.

    Backwards through each episode from ``V_DR = 0`` after its last step:
    ``V_DR <- Vhat(s_t) + rho_t (r_t + discount V_DR - Qhat(s_t, a_t))``, with
    ``Vhat(s_t) = sum_a pi_e(a | s_t) Qhat(s_t, a)``. An `OPEEpisode` does not say whether it
    ended in a terminal state or was truncated by a time limit, so every episode end is taken
    as terminal: nothing is bootstrapped after the last step, and an episode cut by a time
    limit counts for its return up to the cut (as WIS counts it).
    """
    _check_discount(discount)
    steps = _Steps.of(episodes)
    # V_DR(t) = offset_t + scale_t V_DR(t + 1): all but the recursion is vectorised, and the
    # recursion runs on Python floats, far faster than indexing arrays one element at a time.
    offsets = steps.expected(steps.q_values) + steps.ratios * (
        steps.rewards - steps.logged(steps.q_values)
    )
    offset_list, scale_list = offsets.tolist(), (discount * steps.ratios).tolist()
    first_values = []
    for start, stop in zip(steps.starts.tolist(), steps.stops.tolist(), strict=True):
        value = 0.0
        for t in range(stop - 1, start - 1, -1):
            value = offset_list[t] + scale_list[t] * value
        first_values.append(value)
    return float(np.mean(first_values))


@dataclass(frozen=True, slots=True)
class _Steps:
    """Every episode's steps end to end (N in all), so the estimators vectorise over them."""

    actions: np.ndarray
    """The logged actions, (N,)."""
    rewards: np.ndarray
    """The logged rewards, (N,)."""
    ratios: np.ndarray
    """``rho_t = pi_e(a_t | s_t) / pi_b(a_t | s_t)``, (N,)."""
    target_probabilities: np.ndarray
    """``pi_e(. | s_t)``, (N, A)."""
    reward_model: np.ndarray
    """``rhat(s_t, .)``, (N, A)."""
    q_values: np.ndarray
    """``Qhat(s_t, .)``, (N, A)."""
    starts: np.ndarray
    """The index of each episode's first step, (E,)."""
    stops: np.ndarray
    """One past the index of each episode's last step, (E,)."""
    time: np.ndarray
    """Each step's index within its episode, (N,)."""

    @classmethod
    def of(cls, episodes: Sequence[OPEEpisode]) -> _Steps:
        if len(episodes) == 0:
            raise CoachError("off-policy evaluation needs at least one logged episode, got none")
        action_counts = {episode.target_probabilities.shape[1] for episode in episodes}
        if len(action_counts) > 1:
            raise CoachError(
                f"the episodes of one off-policy evaluation must share their number of actions "
                f"(the columns of target_probabilities), got {sorted(action_counts)}"
            )
        lengths = np.array([len(episode.actions) for episode in episodes])
        stops = np.cumsum(lengths)
        starts = stops - lengths
        actions = np.concatenate([episode.actions for episode in episodes])
        target = np.concatenate([episode.target_probabilities for episode in episodes])
        behaviour = np.concatenate([episode.behaviour_probabilities for episode in episodes])
        return cls(
            actions=actions,
            rewards=np.concatenate([episode.rewards for episode in episodes]),
            ratios=target[np.arange(len(actions)), actions] / behaviour,
            target_probabilities=target,
            reward_model=np.concatenate([episode.reward_model for episode in episodes]),
            q_values=np.concatenate([episode.q_values for episode in episodes]),
            starts=starts,
            stops=stops,
            time=np.arange(len(actions)) - np.repeat(starts, lengths),
        )

    def logged(self, per_action: np.ndarray) -> np.ndarray:
        """The logged action's column of an (N, A) array, shape (N,)."""
        return per_action[np.arange(len(self.actions)), self.actions]

    def expected(self, per_action: np.ndarray) -> np.ndarray:
        """``sum_a pi_e(a | s_t) x(s_t, a)`` of an (N, A) array ``x``, shape (N,)."""
        return np.sum(self.target_probabilities * per_action, axis=1)

    def per_episode_sum(self, values: np.ndarray) -> np.ndarray:
        """Sums of an (N,) array over each episode, shape (E,)."""
        return np.add.reduceat(values, self.starts)


def _check_discount(discount: float) -> None:
    if not 0.0 <= discount <= 1.0:
        raise CoachError(f"the discount of off-policy evaluation must be in [0, 1], got {discount}")
