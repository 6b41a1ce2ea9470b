"""Bootstrapped DQN on CartPole-v1 (Osband et al., 2016): 10 heads, each learning from a
random half of the transitions; each episode follows one head."""

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
    BootstrappedQHeadParameters(num_heads=10), learning_rate=2.3e-3
)

graph_manager = BasicRLGraphManager(agent, _cartpole.environment(), _cartpole.schedule())

validation = PresetValidation(min_reward=475, max_env_steps=100_000, seeds=(0, 1, 2))
