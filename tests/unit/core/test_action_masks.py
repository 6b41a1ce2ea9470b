"""Unit tests for coach/core/action_masks.py: the mask's space against the action space, the
legal actions of a row (all of them in a row with none), uniform legal draws and masking."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces

from coach.core.action_masks import (
    ACTION_MASK,
    MASKED_FILL,
    has_action_mask,
    legal_actions,
    legal_actions_tensor,
    legal_only,
    legal_probabilities,
    legal_random_actions,
    masked_values,
)
from coach.errors import CoachError
from coach.exploration.exploration_policy import uniform_integers

MASKS = np.array(
    [
        [1, 0, 1, 0],  # two legal actions
        [0, 0, 0, 1],  # one
        [0, 0, 0, 0],  # none: every action counts
        [1, 1, 1, 1],  # all
    ],
    dtype=np.int8,
)


def observations(mask: spaces.Space) -> spaces.Dict:
    return spaces.Dict({"observation": spaces.Box(-1.0, 1.0, (3,)), ACTION_MASK: mask})


def test_the_name_is_pettingzoos() -> None:
    assert ACTION_MASK == "action_mask"


@pytest.mark.parametrize(
    "mask",
    [spaces.Box(0, 1, (4,), np.int8), spaces.MultiBinary(4), spaces.Box(0, 1, (4,), bool)],
    ids=["int8", "multibinary", "bool"],
)
def test_a_mask_with_an_entry_per_discrete_action_fits(mask: spaces.Space) -> None:
    assert has_action_mask(observations(mask), spaces.Discrete(4))
    assert has_action_mask(observations(mask), spaces.Discrete(4, start=3))


def test_observations_without_a_mask_have_none() -> None:
    assert not has_action_mask(
        spaces.Dict({"observation": spaces.Box(0, 1, (4,))}), spaces.Box(-1, 1)
    )
    assert not has_action_mask(None, spaces.Discrete(2))


def test_a_mask_of_another_length_is_refused_naming_both_shapes() -> None:
    with pytest.raises(CoachError, match=r"shape \(5,\).*Discrete\(4\).*4 actions.*\(4,\)"):
        has_action_mask(observations(spaces.Box(0, 1, (5,), np.int8)), spaces.Discrete(4))


@pytest.mark.parametrize(
    "action_space",
    [spaces.Box(-1.0, 1.0, (4,)), spaces.MultiDiscrete([2, 2, 2, 2])],
    ids=["box", "multidiscrete"],
)
def test_a_mask_on_actions_that_are_not_discrete_is_refused_naming_both_shapes(
    action_space: spaces.Space,
) -> None:
    with pytest.raises(CoachError, match=r"shape \(4,\).*\(shape \(4,\)\) is not Discrete"):
        has_action_mask(observations(spaces.Box(0, 1, (4,), np.int8)), action_space)


def test_a_row_without_legal_actions_has_all() -> None:
    expected = np.array(
        [[True, False, True, False], [False, False, False, True], [True] * 4, [True] * 4]
    )
    np.testing.assert_array_equal(legal_actions(MASKS), expected)
    np.testing.assert_array_equal(legal_actions_tensor(torch.as_tensor(MASKS)).numpy(), expected)
    # Over leading dimensions too (time-major sequences).
    stacked = np.stack([MASKS, MASKS])
    np.testing.assert_array_equal(legal_actions(stacked), np.stack([expected, expected]))


def test_random_legal_actions_are_legal_and_uniform() -> None:
    rng = np.random.default_rng(0)
    draws = 20_000
    counts = np.zeros(MASKS.shape)
    for _ in range(draws // 100):
        actions = np.stack([legal_random_actions(MASKS, rng) for _ in range(100)])  # (100, 4)
        for row in range(len(MASKS)):
            counts[row] += np.bincount(actions[:, row], minlength=4)
    frequencies = counts / draws
    expected = np.array([[0.5, 0, 0.5, 0], [0, 0, 0, 1], [0.25] * 4, [0.25] * 4], dtype=np.float64)
    np.testing.assert_allclose(frequencies, expected, atol=0.015)
    assert frequencies[0, 1] == frequencies[0, 3] == frequencies[1, :3].sum() == 0.0


def test_with_every_action_legal_the_draws_are_uniform_integers() -> None:
    # One float per row, scaled: the same numbers as the unmasked draw of the same generator.
    ones = np.ones((64, 5), dtype=np.int8)
    masked = legal_random_actions(ones, np.random.default_rng(7))
    np.testing.assert_array_equal(masked, uniform_integers(np.random.default_rng(7), 5, 64))


def test_legal_probabilities_are_uniform_over_the_legal_actions() -> None:
    probabilities = legal_probabilities(legal_actions(MASKS))
    np.testing.assert_allclose(
        probabilities, [[0.5, 0, 0.5, 0], [0, 0, 0, 1], [0.25] * 4, [0.25] * 4]
    )


def test_masked_values_fill_the_illegal_actions() -> None:
    values = torch.arange(16, dtype=torch.float32).reshape(4, 4)
    masked = masked_values(values, torch.as_tensor(MASKS), -torch.inf)
    assert masked[0].tolist() == [0.0, -torch.inf, 2.0, -torch.inf]
    assert masked[1].tolist() == [-torch.inf, -torch.inf, -torch.inf, 7.0]
    assert torch.equal(masked[2:], values[2:])  # no legal action, or all: as they were
    # A mask broadcast over an ensemble's heads, (B, 1, A) against (B, K, A).
    heads = values[:, None, :].expand(4, 3, 4)
    per_head = masked_values(heads, torch.as_tensor(MASKS)[:, None], MASKED_FILL)
    assert torch.equal(
        per_head,
        masked_values(values, torch.as_tensor(MASKS), MASKED_FILL)[:, None].expand(4, 3, 4),
    )


def test_legal_only_reads_the_states_mask_or_leaves_the_values_alone() -> None:
    values = torch.randn(4, 4)
    assert legal_only(values, {"observation": torch.zeros(4, 3)}) is values
    masked = legal_only(values, {ACTION_MASK: torch.as_tensor(MASKS)})
    assert masked[0, 1] == MASKED_FILL and masked[0, 0] == values[0, 0]
    # Finite: a row dropped by a zero (a terminal bootstrap) stays zero, not nan.
    assert torch.isfinite(masked).all() and (0.0 * masked).eq(0.0).all()
