"""Conservative Q-learning, CQL(H) (Kumar et al., 2020), on a fixed CartPole dataset.

It learns from ``cartpole/ppo-half-v0`` (see presets/_cartpole_batch.py for how the dataset is
made), as CartPole_DDQN_BatchRL and CartPole_DDQN_BCQ_BatchRL do. Where plain Double DQN on
this data overestimates the actions the dataset rarely took (and stays below 100), CQL's
penalty pushes every action's value down and the logged action's up, so the greedy policy
stays near what the data supports. Off-policy estimates (OPE/ in TensorBoard) are logged after
each epoch, next to the real evaluation.
"""

from coach import PresetValidation
from coach.agents.cql import CQLAgentParameters
from coach_presets import _batch, _cartpole_batch

agent = CQLAgentParameters()
_batch.q_learning(agent)
agent.algorithm.alpha = 1.0

graph_manager = _cartpole_batch.graph(agent, 40)

validation = PresetValidation(min_reward=475, max_epochs=40, seeds=(0, 1, 2))
