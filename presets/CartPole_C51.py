"""C51 on CartPole-v1 (Bellemare et al., 2017): 51 atoms over the discounted returns
CartPole can give (0 to 100 with a discount of 0.99). Its learning rate runs down to 0 over
its budget, on a replay of the last 10,000 transitions (presets/_cartpole.py: `settle`)."""

from coach import (
    BasicRLGraphManager,
    CategoricalDQNAgentParameters,
    CategoricalQHeadParameters,
    LinearSchedule,
    PresetValidation,
)
from coach_presets import _cartpole

agent = CategoricalDQNAgentParameters()
_cartpole.train_in_rounds(agent)
agent.exploration.epsilon_schedule = LinearSchedule(1.0, 0.04, 8000)
agent.network_wrappers["main"] = _cartpole.network(
    CategoricalQHeadParameters(num_atoms=51, v_min=0.0, v_max=100.0), learning_rate=1e-3
)

_cartpole.settle(agent)

graph_manager = BasicRLGraphManager(agent, _cartpole.environment(), _cartpole.schedule())

validation = PresetValidation(min_reward=475, max_env_steps=100_000, seeds=(0, 1, 2))
