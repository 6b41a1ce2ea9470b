"""The dataset of the CartPole batch-RL presets, and how it is made.

``cartpole/ppo-half-v0``: about 50,000 transitions (210 episodes) acted by a partly trained
Clipped PPO agent, which scores about half the maximum reward (its episodes average near 250
of 500). The agent acts with its own stochastic policy, so it logs the probability of every
action, and its choices vary where it is unsure. It is made in two commands (a minute or two
on a laptop, see RECIPE): train CartPole_ClippedPPO for 3,840 env steps, then let that agent
act for 52,000 more with its learning rate at 0 (its policy frozen), recording what it does.
On seed 0 the recorded episodes average 243.9. Not a preset itself.
"""

from __future__ import annotations

from coach.agents.parameters import AgentParameters
from coach.batch.graph_manager import BatchRLGraphManager
from coach_presets import _batch

DATASET = "cartpole/ppo-half-v0"
TRANSITIONS = 51_222
"""The dataset's transitions, as its recipe makes them on seed 0."""

RECIPE = _batch.frozen_policy_recipe("CartPole_ClippedPPO", "cartpole_ppo_half", 3840, DATASET)


def graph(agent: AgentParameters, epochs: int) -> BatchRLGraphManager:
    """``agent`` learning from the CartPole dataset for ``epochs``."""
    return _batch.graph(agent, "CartPole-v1", DATASET, RECIPE, epochs)


def settle(agent: AgentParameters, epochs: int) -> None:
    """`_batch.settle` over ``epochs`` of this dataset."""
    _batch.settle(agent, epochs, TRANSITIONS)
