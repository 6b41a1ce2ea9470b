"""Bootstrapped DQN on CartPole-v1 (Osband et al., 2016): 10 heads, each learning from a
random half of the transitions; each episode follows one head.

Adam from 7e-4 run down to 0 over the budget, on a replay of the last 10,000 transitions
(`_cartpole.settle`). At a constant 2.3e-3 the final agent of seed 2 fell to 13; run down
from 2.3e-3 two final agents in three fell below 200, from 1e-3 one in three, from 5e-4
seed 1 never reached 475; from 7e-4 seeds 0 to 5 all end at 500."""

from coach import (
    BasicRLGraphManager,
    BootstrappedDQNAgentParameters,
    BootstrappedQHeadParameters,
    PresetValidation,
)
from coach_presets import _cartpole

agent = BootstrappedDQNAgentParameters()
_cartpole.train_in_rounds(agent)
agent.algorithm.bootstrap_probability = 0.5
agent.network_wrappers["main"] = _cartpole.network(
    BootstrappedQHeadParameters(num_heads=10), learning_rate=7e-4
)
_cartpole.settle(agent)

graph_manager = BasicRLGraphManager(agent, _cartpole.environment(), _cartpole.schedule())

validation = PresetValidation(min_reward=475, max_env_steps=100_000, seeds=(0, 1, 2))
