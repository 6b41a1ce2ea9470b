"""DQN on CartPole-v1 (Mnih et al., 2015), tuned after RL Zoo's DQN CartPole settings.

Training happens in rounds (see presets/_cartpole.py): every 256 env steps, 128 gradient
steps on batches of 64. Epsilon falls from 1 to 0.04 over the first 8,000 training steps. It
reaches the maximum reward of 500 within 50,000 env steps (heatup included) on seeds 0, 1, 2.
"""

from coach import (
    BasicRLGraphManager,
    DQNAgentParameters,
    LinearSchedule,
    PresetValidation,
    QHeadParameters,
)
from coach_presets import _cartpole

agent = DQNAgentParameters()
_cartpole.train_in_rounds(agent)
agent.exploration.epsilon_schedule = LinearSchedule(1.0, 0.04, 8000)
agent.network_wrappers["main"] = _cartpole.network(QHeadParameters(), learning_rate=2.3e-3)

graph_manager = BasicRLGraphManager(agent, _cartpole.environment(), _cartpole.schedule(49_000))

validation = PresetValidation(min_reward=475, max_env_steps=50_000, seeds=(0, 1, 2))
