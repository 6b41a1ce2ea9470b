"""QR-DQN on CartPole-v1 (Dabney et al., 2018): 50 quantiles per action. Its
learning rate runs down to 0 over its budget, on a replay of the last 10,000 transitions
(presets/_cartpole.py: `settle`)."""

from coach import (
    BasicRLGraphManager,
    LinearSchedule,
    PresetValidation,
    QRDQNAgentParameters,
    QuantileQHeadParameters,
)
from coach_presets import _cartpole

agent = QRDQNAgentParameters()
_cartpole.train_in_rounds(agent)
agent.exploration.epsilon_schedule = LinearSchedule(1.0, 0.04, 8000)
agent.network_wrappers["main"] = _cartpole.network(
    QuantileQHeadParameters(num_quantiles=50), learning_rate=1e-3
)

_cartpole.settle(agent)

graph_manager = BasicRLGraphManager(agent, _cartpole.environment(), _cartpole.schedule())

validation = PresetValidation(min_reward=475, max_env_steps=100_000, seeds=(0, 1, 2))
