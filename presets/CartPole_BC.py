"""Behavioral cloning on a fixed CartPole dataset: a classifier of the logged actions.

It learns from ``cartpole/ppo-half-v0``: about 50,000 transitions of a Clipped PPO agent that
scores about half the maximum reward, acting with its stochastic policy (see
presets/_cartpole_batch.py for how the dataset is made). The clone acts with the most likely
action, which removes the behaviour's sampling noise but nothing of its mistakes: the
baseline that batch RL (CartPole_DDQN_BCQ_BatchRL) improves on.
"""

from coach import PresetValidation
from coach.agents.bc import BCAgentParameters
from coach.networks.heads import CategoricalPolicyHeadParameters
from coach_presets import _batch, _cartpole_batch

agent = BCAgentParameters()
agent.algorithm.batch_size = 128
agent.network_wrappers["main"] = _batch.network(
    CategoricalPolicyHeadParameters(name="logits"), target=False
)

graph_manager = _cartpole_batch.graph(agent, 20)

validation = PresetValidation(min_reward=300, max_epochs=20, seeds=(0, 1, 2))
"""Above the behaviour's own mean (243.9), below what BCQ reaches on the same data."""
