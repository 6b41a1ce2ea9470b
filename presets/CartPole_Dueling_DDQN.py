"""Dueling Double DQN on CartPole-v1 (Wang et al., 2016): a value stream and centred
advantages in the Q head. Its learning rate starts at 5e-4 and runs down to 0 over its budget,
on a replay of the last 10,000 transitions (presets/_cartpole.py: `settle`). At CartPole_DQN's
2.3e-3, run down the same way, the final agents of seeds 1, 2 and 3 fell below 475; at 5e-4
every seed ends at 500."""

from coach import (
    BasicRLGraphManager,
    DDQNAgentParameters,
    LinearSchedule,
    PresetValidation,
    QHeadParameters,
)
from coach_presets import _cartpole

agent = DDQNAgentParameters()
_cartpole.train_in_rounds(agent)
agent.exploration.epsilon_schedule = LinearSchedule(1.0, 0.04, 8000)
agent.network_wrappers["main"] = _cartpole.network(
    QHeadParameters(dueling=True), learning_rate=5e-4
)

_cartpole.settle(agent)

graph_manager = BasicRLGraphManager(agent, _cartpole.environment(), _cartpole.schedule())

validation = PresetValidation(min_reward=475, max_env_steps=100_000, seeds=(0, 1, 2))
