"""Double DQN on a fixed CartPole dataset: batch RL without a constraint, the baseline of
CartPole_DDQN_BCQ_BatchRL.

It learns from ``cartpole/ppo-half-v0`` (see presets/_cartpole_batch.py for how the dataset is
made), never acting in the environment except in the evaluations after each epoch. Q-learning
on a fixed dataset overestimates the actions the data rarely took, which BCQ corrects.
"""

from coach import DDQNAgentParameters, PresetValidation
from coach_presets import _batch, _cartpole_batch

agent = DDQNAgentParameters()
_batch.q_learning(agent)

graph_manager = _cartpole_batch.graph(agent, 40)

validation = PresetValidation(max_reward=100, max_epochs=40, seeds=(0, 1, 2))
"""The baseline: on this data plain DDQN stays far below what BCQ reaches (475)."""
