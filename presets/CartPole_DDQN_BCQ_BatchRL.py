"""Discrete BCQ (DDQN-BCQ, Fujimoto et al., 2019) on a fixed CartPole dataset.

It learns from ``cartpole/ppo-half-v0``: about 50,000 transitions of a Clipped PPO agent that
scores about half the maximum reward (see presets/_cartpole_batch.py for how the dataset is made).
A behaviour model rules out the actions the dataset's agent would rarely take (below 0.3 of
the most likely one's probability), in the bootstrap target and in acting. Off-policy
estimates of the policy (OPE/ in TensorBoard) are logged after each epoch, next to the real
evaluation.
"""

from coach import PresetValidation
from coach.agents.bcq import DDQNBCQAgentParameters
from coach.networks.heads import CategoricalPolicyHeadParameters
from coach_presets import _batch, _cartpole_batch

agent = DDQNBCQAgentParameters()
_batch.q_learning(agent)
agent.algorithm.threshold = 0.3
agent.network_wrappers["imitation"] = _batch.network(
    CategoricalPolicyHeadParameters(name="logits"), target=False
)

graph_manager = _cartpole_batch.graph(agent, 40)

validation = PresetValidation(min_reward=475, max_epochs=40, seeds=(0, 1, 2))
