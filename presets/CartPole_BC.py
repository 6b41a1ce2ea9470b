"""Behavioral cloning on a fixed CartPole dataset: a classifier of the logged actions.

It learns from ``cartpole/ppo-half-v0``: about 50,000 transitions of a Clipped PPO agent that
scores about half the maximum reward, acting with its stochastic policy (see
presets/_cartpole_batch.py for how the dataset is made). The clone acts with the most likely
action, which removes the behaviour's sampling noise but nothing of its mistakes: the
baseline that batch RL (CartPole_DDQN_BCQ_BatchRL) improves on.

Three epochs, the learning rate run down to 0 over them: the behaviour's own greedy policy
scores 337.0 on 20 episodes (std 113.6), so a clone holds 300 only if it stays close to it,
and a longer fit does not. Measured on seeds 0 to 5, the final agent on 20 fresh episodes:
after 3 epochs 325.1, 334.4, 300.8, 326.6, 331.1, 316.1; after 20 (the rate run down over
them) 303.8, 274.3, 298.1, 319.5, 334.9, 312.3.
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

_cartpole_batch.settle(agent, 3)
graph_manager = _cartpole_batch.graph(agent, 3)

validation = PresetValidation(min_reward=300, max_epochs=3, seeds=(0, 1, 2))
"""Above the behaviour's own mean (243.9), below what BCQ reaches on the same data."""
