"""Conservative Q-learning, CQL(H) (Kumar et al., 2020), on a fixed CartPole dataset.

It learns from ``cartpole/ppo-half-v0`` (see presets/_cartpole_batch.py for how the dataset is
made), as CartPole_DDQN_BatchRL and CartPole_DDQN_BCQ_BatchRL do. Where plain Double DQN on
this data overestimates the actions the dataset rarely took (and stays below 100), CQL's
penalty pushes every action's value down and the logged action's up, so the greedy policy
stays near what the data supports. Off-policy estimates (OPE/ in TensorBoard) are logged after
each epoch, next to the real evaluation.

The learning rate runs down to 0 over the 40 epochs' gradient steps: the final agents on 20
fresh episodes, seeds 0 to 4, 487.4, 481.0, 476.1, 494.6, 464.4 (at a constant rate seed 0's
was 370.1, seed 2's 258.7). A larger penalty (alpha 2) or half the epochs end lower.
"""

from coach import PresetValidation
from coach.agents.cql import CQLAgentParameters
from coach_presets import _batch, _cartpole_batch

agent = CQLAgentParameters()
_batch.q_learning(agent)
agent.algorithm.alpha = 1.0

_cartpole_batch.settle(agent, 40)
graph_manager = _cartpole_batch.graph(agent, 40)

validation = PresetValidation(min_reward=475, max_epochs=40, seeds=(0, 1, 2))
