"""Discrete BCQ (DDQN-BCQ, Fujimoto et al., 2019) on a fixed CartPole dataset.

It learns from ``cartpole/ppo-half-v0``: about 50,000 transitions of a Clipped PPO agent that
scores about half the maximum reward (see presets/_cartpole_batch.py for how the dataset is made).
A behaviour model rules out the actions the dataset's agent would rarely take (below 0.5 of
the most likely one's probability), in the bootstrap target and in acting. Off-policy
estimates of the policy (OPE/ in TensorBoard) are logged after each epoch, next to the real
evaluation.

Thirty epochs, the learning rate run down to 0 over them. Measured on seeds 0 to 5, the final
agent on 20 fresh episodes: 500 on every seed with a threshold of 0.5 over 30 epochs; with
0.3 over 40 (Fujimoto's threshold for Atari) 500, 159.2, 500 on seeds 0, 1, 2; with 0.5 over
20, 378.6 on seed 4 (and 0.4 over 20, 240.4 and 146.2 on seeds 1 and 5). The greedy policy of
a Q function learnt offline swings from epoch to epoch; a threshold closer to the behaviour
narrows what it may swing to.
"""

from coach import PresetValidation
from coach.agents.bcq import DDQNBCQAgentParameters
from coach.networks.heads import CategoricalPolicyHeadParameters
from coach_presets import _batch, _cartpole_batch

agent = DDQNBCQAgentParameters()
_batch.q_learning(agent)
agent.algorithm.threshold = 0.5
agent.network_wrappers["imitation"] = _batch.network(
    CategoricalPolicyHeadParameters(name="logits"), target=False
)

_cartpole_batch.settle(agent, 30)
graph_manager = _cartpole_batch.graph(agent, 30)

validation = PresetValidation(min_reward=475, max_epochs=30, seeds=(0, 1, 2))
