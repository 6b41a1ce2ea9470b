"""N-step double Q-learning on CartPole-v1: 3-step returns built before the replay memory.
Its learning rate runs down to 0 over its budget, on a replay of the last 10,000 transitions
(presets/_cartpole.py: `settle`)."""

from coach import (
    BasicRLGraphManager,
    LinearSchedule,
    NStepQAgentParameters,
    PresetValidation,
    QHeadParameters,
)
from coach_presets import _cartpole

agent = NStepQAgentParameters()
_cartpole.train_in_rounds(agent)
agent.algorithm.n_step = 3
agent.exploration.epsilon_schedule = LinearSchedule(1.0, 0.04, 8000)
agent.network_wrappers["main"] = _cartpole.network(QHeadParameters(), learning_rate=2.3e-3)

_cartpole.settle(agent)

graph_manager = BasicRLGraphManager(agent, _cartpole.environment(), _cartpole.schedule())

validation = PresetValidation(min_reward=475, max_env_steps=100_000, seeds=(0, 1, 2))
