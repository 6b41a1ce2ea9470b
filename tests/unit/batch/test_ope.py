"""Off-policy estimators against values computed exactly, independently of coach/ope.py.

A contextual bandit gives the true per-step value by enumeration; small episodic MDPs give
``V^{pi_e}(s0)`` and ``Q^{pi_e}`` by solving the linear Bellman system. Sampled datasets use a
fixed seed, and each tolerance is four standard errors of the estimator, computed exactly by
enumeration (bandit) or from the spread over episodes (MDPs) and itself bounded, so that a
noisy estimator cannot pass with a wide tolerance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from coach.batch.ope import (
    OPEEpisode,
    direct_method,
    doubly_robust,
    estimate,
    inverse_propensity_scoring,
    sequential_doubly_robust,
    weighted_importance_sampling,
)
from coach.errors import CoachError

# --- contextual bandit: 3 contexts, 3 actions --------------------------------------------------

CONTEXT_PROBABILITIES = np.array([0.5, 0.3, 0.2])
REWARDS = np.array([[1.0, 0.0, 2.0], [0.5, 3.0, -1.0], [2.0, 1.0, 0.0]])
BANDIT_BEHAVIOUR = np.array([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.4, 0.4, 0.2]])
BANDIT_TARGET = np.array([[0.1, 0.2, 0.7], [0.1, 0.8, 0.1], [0.6, 0.3, 0.1]])
WRONG_REWARDS = REWARDS + np.array([[1.0, -2.0, 0.5], [-1.5, 1.0, 2.0], [0.5, 0.5, -3.0]])
# Counts of each (context, action) in 100 steps, exactly 100 p(s) pi_b(a | s).
PROPORTIONAL_COUNTS = np.array([[25, 15, 10], [6, 15, 9], [8, 8, 4]])
BANDIT_SAMPLES = 10_000

TRUE_BANDIT_VALUE = float(CONTEXT_PROBABILITIES @ np.sum(BANDIT_TARGET * REWARDS, axis=1))


def _bandit_episodes(
    contexts: np.ndarray, actions: np.ndarray, model: np.ndarray
) -> list[OPEEpisode]:
    """One one-step episode per (context, action); ``model`` is both rhat and Qhat."""
    return [
        OPEEpisode(
            actions=np.array([a]),
            rewards=np.array([REWARDS[s, a]]),
            behaviour_probabilities=np.array([BANDIT_BEHAVIOUR[s, a]]),
            target_probabilities=BANDIT_TARGET[s][None],
            reward_model=model[s][None],
            q_values=model[s][None],
        )
        for s, a in zip(contexts, actions, strict=True)
    ]


def _proportional_bandit(model: np.ndarray) -> list[OPEEpisode]:
    """Every (context, action) exactly in proportion to p(s) pi_b(a | s)."""
    pairs = [(s, a) for s in range(3) for a in range(3) for _ in range(PROPORTIONAL_COUNTS[s, a])]
    contexts, actions = (np.array(column) for column in zip(*pairs, strict=True))
    return _bandit_episodes(contexts, actions, model)


def _sampled_bandit(model: np.ndarray) -> list[OPEEpisode]:
    """``BANDIT_SAMPLES`` steps of the behaviour policy, the same ones whatever the model."""
    rng = np.random.default_rng(0)
    contexts = rng.choice(3, size=BANDIT_SAMPLES, p=CONTEXT_PROBABILITIES)
    cumulative = np.cumsum(BANDIT_BEHAVIOUR[contexts], axis=1)
    actions = np.minimum((rng.random(BANDIT_SAMPLES)[:, None] >= cumulative).sum(axis=1), 2)
    return _bandit_episodes(contexts, actions, model)


@pytest.fixture(scope="module")
def sampled_exact() -> list[OPEEpisode]:
    return _sampled_bandit(REWARDS)


@pytest.fixture(scope="module")
def sampled_wrong() -> list[OPEEpisode]:
    return _sampled_bandit(WRONG_REWARDS)


def _standard_error(per_pair: np.ndarray) -> float:
    """Standard error of the mean of ``per_pair[s, a]`` over the sampled bandit, exactly."""
    probabilities = CONTEXT_PROBABILITIES[:, None] * BANDIT_BEHAVIOUR
    mean = np.sum(probabilities * per_pair)
    variance = np.sum(probabilities * (per_pair - mean) ** 2)
    return math.sqrt(variance / BANDIT_SAMPLES)


def _ips_terms() -> np.ndarray:
    return BANDIT_TARGET / BANDIT_BEHAVIOUR * REWARDS


def _dm_terms(model: np.ndarray) -> np.ndarray:
    return np.repeat(np.sum(BANDIT_TARGET * model, axis=1, keepdims=True), 3, axis=1)


def _dr_terms(model: np.ndarray) -> np.ndarray:
    return _dm_terms(model) + BANDIT_TARGET / BANDIT_BEHAVIOUR * (REWARDS - model)


@pytest.mark.parametrize("model", [REWARDS, WRONG_REWARDS], ids=["exact", "wrong"])
def test_bandit_in_exact_proportions_gives_the_true_value(model: np.ndarray) -> None:
    """IPS and DR (any model) and DM (exact model) are exact when the data has no noise."""
    episodes = _proportional_bandit(model)
    assert inverse_propensity_scoring(episodes) == pytest.approx(TRUE_BANDIT_VALUE, abs=1e-9)
    assert doubly_robust(episodes) == pytest.approx(TRUE_BANDIT_VALUE, abs=1e-9)
    model_value = float(CONTEXT_PROBABILITIES @ np.sum(BANDIT_TARGET * model, axis=1))
    assert direct_method(episodes) == pytest.approx(model_value, abs=1e-9)


def test_estimate_on_one_step_episodes_agrees_with_the_bandit_value() -> None:
    """With one-step episodes WIS is self-normalised IPS and SDR is DR with rhat = Qhat."""
    estimates = estimate(_proportional_bandit(WRONG_REWARDS), discount=0.9).as_dict()
    assert set(estimates) == {"ips", "dm", "dr", "wis", "sdr"}
    for name in ("ips", "dr", "wis", "sdr"):
        assert estimates[name] == pytest.approx(TRUE_BANDIT_VALUE, abs=1e-9), name
    assert abs(estimates["dm"] - TRUE_BANDIT_VALUE) > 0.1


def test_sampled_bandit_ips_is_unbiased(sampled_exact: list[OPEEpisode]) -> None:
    tolerance = 4 * _standard_error(_ips_terms())
    assert tolerance < 0.1
    ips = inverse_propensity_scoring(sampled_exact)
    assert abs(ips - TRUE_BANDIT_VALUE) < tolerance


def test_sampled_bandit_dr_with_a_wrong_model_is_unbiased_and_dm_is_not(
    sampled_wrong: list[OPEEpisode],
) -> None:
    episodes = sampled_wrong
    dr_tolerance = 4 * _standard_error(_dr_terms(WRONG_REWARDS))
    assert dr_tolerance < 0.05
    assert abs(doubly_robust(episodes) - TRUE_BANDIT_VALUE) < dr_tolerance

    bias = float(CONTEXT_PROBABILITIES @ np.sum(BANDIT_TARGET * (WRONG_REWARDS - REWARDS), 1))
    dm_tolerance = 4 * _standard_error(_dm_terms(WRONG_REWARDS))
    assert abs(bias) > 10 * dm_tolerance  # the wrong model is measurably wrong
    dm = direct_method(episodes)
    assert abs(dm - (TRUE_BANDIT_VALUE + bias)) < dm_tolerance
    assert abs(dm - TRUE_BANDIT_VALUE) > abs(bias) / 2


def test_sampled_bandit_dm_and_dr_with_the_exact_model_are_close(
    sampled_exact: list[OPEEpisode],
) -> None:
    tolerance = 4 * _standard_error(_dm_terms(REWARDS))
    assert abs(direct_method(sampled_exact) - TRUE_BANDIT_VALUE) < tolerance
    # Deterministic rewards and an exact model: DR's correction is zero on every step.
    assert doubly_robust(sampled_exact) == pytest.approx(direct_method(sampled_exact), abs=1e-12)


# --- episodic MDPs: 3 states, 2 actions, start in state 0 ---------------------------------------

DISCOUNT = 0.9
MDP_BEHAVIOUR = np.array([[0.5, 0.5], [0.6, 0.4], [0.3, 0.7]])
MDP_TARGET = np.array([[0.2, 0.8], [0.7, 0.3], [0.6, 0.4]])
MDP_REWARDS = np.array([[0.0, 1.0], [2.0, -1.0], [0.5, 3.0]])
Q_ERROR = np.array([[2.0, 1.5], [-1.5, 1.0], [1.0, 2.0]])
EPISODES = 10_000

# Stochastic: P[s, a, s'] = (1 - terminate(s, a)) * next(s' | s, a, continuing).
_TERMINATE = np.array([[0.2, 0.3], [0.25, 0.2], [0.5, 0.3]])
_NEXT = np.array(
    [
        [[0.1, 0.6, 0.3], [0.5, 0.2, 0.3]],
        [[0.3, 0.3, 0.4], [0.0, 0.5, 0.5]],
        [[0.6, 0.2, 0.2], [0.2, 0.7, 0.1]],
    ]
)
STOCHASTIC = (1 - _TERMINATE)[:, :, None] * _NEXT
# Deterministic: s0 -> s1 or s2, s1 -> s2 or s0, s2 -> terminal or s1.
DETERMINISTIC = np.zeros((3, 2, 3))
for _s, _a, _next in [(0, 0, 1), (0, 1, 2), (1, 0, 2), (1, 1, 0), (2, 1, 1)]:
    DETERMINISTIC[_s, _a, _next] = 1.0


def _exact_q(transitions: np.ndarray, policy: np.ndarray) -> np.ndarray:
    """Solve Q = r + discount P pi Q, with ``transitions`` sub-stochastic (the rest ends)."""
    num_states, num_actions = MDP_REWARDS.shape
    state_to_pairs = np.zeros((num_states, num_states * num_actions))
    for s in range(num_states):
        state_to_pairs[s, s * num_actions : (s + 1) * num_actions] = policy[s]
    bellman = transitions.reshape(-1, num_states) @ state_to_pairs
    q = np.linalg.solve(np.eye(num_states * num_actions) - DISCOUNT * bellman, MDP_REWARDS.ravel())
    return q.reshape(num_states, num_actions)


@dataclass
class Trajectory:
    """The states and actions of one sampled episode, turned into an OPEEpisode on demand."""

    states: list[int]
    actions: list[int]

    @property
    def rewards(self) -> np.ndarray:
        return MDP_REWARDS[self.states, self.actions]

    def episode(self, target: np.ndarray, q: np.ndarray) -> OPEEpisode:
        return OPEEpisode(
            actions=np.array(self.actions),
            rewards=self.rewards,
            behaviour_probabilities=MDP_BEHAVIOUR[self.states, self.actions],
            target_probabilities=target[self.states],
            reward_model=MDP_REWARDS[self.states],
            q_values=q[self.states],
        )


def _sample(transitions: np.ndarray, count: int, seed: int) -> list[Trajectory]:
    """``count`` episodes of the behaviour policy from state 0."""
    rng = np.random.default_rng(seed)
    trajectories = []
    for _ in range(count):
        state, states, actions = 0, [], []
        while True:
            action = int(rng.random() >= MDP_BEHAVIOUR[state, 0])
            states.append(state)
            actions.append(action)
            cumulative = np.cumsum(transitions[state, action])
            u = rng.random()
            if u >= cumulative[-1]:
                break
            state = int(np.searchsorted(cumulative, u, side="right"))
        trajectories.append(Trajectory(states, actions))
    return trajectories


@pytest.fixture(scope="module")
def stochastic_trajectories() -> list[Trajectory]:
    return _sample(STOCHASTIC, EPISODES, seed=1)


@pytest.fixture(scope="module")
def target_episodes(stochastic_trajectories: list[Trajectory]) -> list[OPEEpisode]:
    """The sampled episodes, evaluating pi_e with its exact Q."""
    q = _exact_q(STOCHASTIC, MDP_TARGET)
    return [t.episode(MDP_TARGET, q) for t in stochastic_trajectories]


def _sdr_tolerance(episodes: list[OPEEpisode]) -> float:
    """Four standard errors of SDR, a mean of per-episode values."""
    values = [sequential_doubly_robust([episode], DISCOUNT) for episode in episodes]
    return 4 * float(np.std(values)) / math.sqrt(len(values))


def test_sdr_with_the_exact_q_is_close(target_episodes: list[OPEEpisode]) -> None:
    q = _exact_q(STOCHASTIC, MDP_TARGET)
    true_value = float(MDP_TARGET[0] @ q[0])
    tolerance = _sdr_tolerance(target_episodes)
    assert tolerance < 0.12
    assert abs(sequential_doubly_robust(target_episodes, DISCOUNT) - true_value) < tolerance


def test_sdr_with_a_wrong_q_is_unbiased(stochastic_trajectories: list[Trajectory]) -> None:
    q = _exact_q(STOCHASTIC, MDP_TARGET)
    true_value = float(MDP_TARGET[0] @ q[0])
    wrong_q = q + Q_ERROR
    episodes = [t.episode(MDP_TARGET, wrong_q) for t in stochastic_trajectories]
    tolerance = _sdr_tolerance(episodes)
    assert tolerance < 0.15
    assert abs(float(MDP_TARGET[0] @ wrong_q[0]) - true_value) > 5 * tolerance  # a bad model
    assert abs(sequential_doubly_robust(episodes, DISCOUNT) - true_value) < tolerance


def test_wis_is_close(
    stochastic_trajectories: list[Trajectory], target_episodes: list[OPEEpisode]
) -> None:
    q = _exact_q(STOCHASTIC, MDP_TARGET)
    true_value = float(MDP_TARGET[0] @ q[0])
    weights = np.array(
        [
            np.prod(MDP_TARGET[t.states, t.actions] / MDP_BEHAVIOUR[t.states, t.actions])
            for t in stochastic_trajectories
        ]
    )
    returns = np.array([_discounted_return(t.rewards) for t in stochastic_trajectories])
    expected = float(weights @ returns / weights.sum())
    wis = weighted_importance_sampling(target_episodes, DISCOUNT)
    assert wis == pytest.approx(expected, rel=1e-9)
    # Delta-method standard error of a ratio estimator.
    tolerance = 4 * math.sqrt(np.sum(weights**2 * (returns - expected) ** 2)) / weights.sum()
    assert tolerance < 0.25
    assert abs(wis - true_value) < tolerance


def test_on_policy_estimates_are_plain_means(stochastic_trajectories: list[Trajectory]) -> None:
    """With pi_e = pi_b every ratio is 1: WIS is the mean return, IPS the mean reward."""
    trajectories = stochastic_trajectories[:2000]
    q = _exact_q(STOCHASTIC, MDP_BEHAVIOUR)
    episodes = [t.episode(MDP_BEHAVIOUR, q) for t in trajectories]
    returns = [_discounted_return(t.rewards) for t in trajectories]
    rewards = [r for t in trajectories for r in t.rewards]
    assert weighted_importance_sampling(episodes, DISCOUNT) == pytest.approx(
        sum(returns) / len(returns), rel=1e-12
    )
    assert inverse_propensity_scoring(episodes) == pytest.approx(
        sum(rewards) / len(rewards), rel=1e-12
    )


def test_sdr_with_the_exact_q_is_exact_on_every_deterministic_episode() -> None:
    """Deterministic dynamics and exact Q: each correction r + g V(s') - Q(s, a) is zero."""
    q = _exact_q(DETERMINISTIC, MDP_TARGET)
    true_value = float(MDP_TARGET[0] @ q[0])
    for trajectory in _sample(DETERMINISTIC, 200, seed=2):
        episode = trajectory.episode(MDP_TARGET, q)
        assert sequential_doubly_robust([episode], DISCOUNT) == pytest.approx(true_value, abs=1e-9)


def _discounted_return(rewards: np.ndarray) -> float:
    return sum(DISCOUNT**t * float(r) for t, r in enumerate(rewards))


# --- by hand ------------------------------------------------------------------------------------


def test_every_estimator_on_two_episodes_computed_by_hand() -> None:
    episodes = [
        OPEEpisode(
            actions=np.array([1, 0]),
            rewards=np.array([1.0, 3.0]),
            behaviour_probabilities=np.array([0.5, 0.25]),
            target_probabilities=np.array([[0.25, 0.75], [0.5, 0.5]]),
            reward_model=np.array([[0.0, 2.0], [4.0, 0.0]]),
            q_values=np.array([[2.0, 4.0], [1.0, 5.0]]),
        ),
        OPEEpisode(
            actions=np.array([0]),
            rewards=np.array([2.0]),
            behaviour_probabilities=np.array([0.5]),
            target_probabilities=np.array([[0.5, 0.5]]),
            reward_model=np.array([[1.0, 3.0]]),
            q_values=np.array([[1.0, 1.0]]),
        ),
    ]
    # ratios 1.5, 2 | 1; returns (discount 0.5) 2.5 | 2; weights 3 | 1.
    # SDR: 3 + 2 (3 - 1) = 7, then 3.5 + 1.5 (1 + 0.5 * 7 - 4) = 4.25 | 1 + (2 - 1) = 2.
    estimates = estimate(episodes, discount=0.5)
    assert estimates.ips == pytest.approx((1.5 + 6 + 2) / 3)
    assert estimates.dm == pytest.approx((1.5 + 2 + 2) / 3)
    assert estimates.dr == pytest.approx((1.5 + 2 + 2 - 1.5 - 2 + 1) / 3)
    assert estimates.wis == pytest.approx((3 * 2.5 + 2) / 4)
    assert estimates.sdr == pytest.approx((4.25 + 2) / 2)


# --- edge cases ---------------------------------------------------------------------------------


def _episode(steps: int = 2, **overrides: object) -> OPEEpisode:
    fields: dict[str, object] = {
        "actions": np.zeros(steps, dtype=np.int64),
        "rewards": np.ones(steps),
        "behaviour_probabilities": np.full(steps, 0.5),
        "target_probabilities": np.full((steps, 2), 0.5),
        "reward_model": np.zeros((steps, 2)),
        "q_values": np.zeros((steps, 2)),
    }
    fields.update(overrides)
    return OPEEpisode(**fields)  # type: ignore[arg-type]


def test_wis_is_nan_when_every_weight_is_zero() -> None:
    never = np.array([[0.0, 1.0], [0.5, 0.5]])  # pi_e never takes the logged action 0 first
    assert math.isnan(weighted_importance_sampling([_episode(target_probabilities=never)] * 3, 1))


LONG = 500
LONG_RETURN = sum(0.99**t for t in range(LONG))
"""The discounted return (discount 0.99) of 500 rewards of 1."""


@pytest.mark.parametrize(
    ("ratio", "other_ratio", "expected"),
    [
        (9.0, 1 / 9, LONG_RETURN),  # 9^1000 times heavier: the first episode alone counts
        (1 / 9, 9.0, 2 * LONG_RETURN),
        (1 / 9, 1 / 9, 1.5 * LONG_RETURN),  # equal weights: the mean of the two returns
        (9.0, 9.0, 1.5 * LONG_RETURN),
    ],
)
def test_wis_of_long_episodes_is_finite(ratio: float, other_ratio: float, expected: float) -> None:
    """Weights of 9^500 overflow a float64 and 9^-500 underflow it; the estimate must not."""

    def long_episode(ratio: float, reward: float) -> OPEEpisode:
        target = 0.9 if ratio > 1 else 0.1  # of the logged action 0, with pi_b = 1 - target
        return _episode(
            LONG,
            rewards=np.full(LONG, reward),
            behaviour_probabilities=np.full(LONG, 1 - target),
            target_probabilities=np.tile([target, 1 - target], (LONG, 1)),
        )

    episodes = [long_episode(ratio, 1.0), long_episode(other_ratio, 2.0)]
    wis = weighted_importance_sampling(episodes, 0.99)
    assert math.isfinite(wis)
    assert wis == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("actions", np.zeros((2, 1), dtype=np.int64)),
        ("actions", np.array([0.0, 1.0])),
        ("actions", np.array([0, 2])),
        ("rewards", np.ones(3)),
        ("behaviour_probabilities", np.full(1, 0.5)),
        ("behaviour_probabilities", np.array([0.5, 0.0])),
        ("behaviour_probabilities", np.array([0.5, 1.5])),
        ("target_probabilities", np.full((3, 2), 0.5)),
        ("target_probabilities", np.array([[0.5, 0.5], [0.5, 0.4]])),
        ("target_probabilities", np.array([[0.5, 0.5], [1.5, -0.5]])),
        ("reward_model", np.zeros((2, 3))),
        ("q_values", np.zeros(2)),
        ("q_values", np.array([[0.0, np.nan], [0.0, 0.0]])),
    ],
)
def test_invalid_episodes_are_refused_naming_the_field(field: str, value: np.ndarray) -> None:
    with pytest.raises(CoachError, match=f"OPEEpisode.{field}"):
        _episode(**{field: value})


def test_a_valid_episode_is_accepted() -> None:
    """The baseline the invalid cases above each change in one field."""
    _episode()


@pytest.mark.parametrize(
    "estimator",
    [
        inverse_propensity_scoring,
        direct_method,
        doubly_robust,
        lambda episodes: weighted_importance_sampling(episodes, 0.9),
        lambda episodes: sequential_doubly_robust(episodes, 0.9),
        lambda episodes: estimate(episodes, 0.9),
    ],
    ids=["ips", "dm", "dr", "wis", "sdr", "estimate"],
)
def test_no_episodes_is_refused(estimator) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(CoachError, match="at least one"):
        estimator([])


def test_episodes_with_different_action_counts_are_refused() -> None:
    three_actions = _episode(
        target_probabilities=np.full((2, 3), 1 / 3),
        reward_model=np.zeros((2, 3)),
        q_values=np.zeros((2, 3)),
    )
    with pytest.raises(CoachError, match="number of actions"):
        direct_method([_episode(), three_actions])


@pytest.mark.parametrize("discount", [-0.1, 1.5])
def test_a_discount_outside_zero_one_is_refused(discount: float) -> None:
    with pytest.raises(CoachError, match="discount"):
        weighted_importance_sampling([_episode()], discount)
    with pytest.raises(CoachError, match="discount"):
        sequential_doubly_robust([_episode()], discount)
