"""Persistent Advantage Learning on CartPole-v1 (Bellemare et al., 2016): CartPole_DQN's
settings (rounds of 128 gradient steps on batches of 64 every 256 env steps, epsilon from 1
to 0.04 over 8,000 steps, two layers of 256), its targets widened by persistent advantage
learning (alpha 0.9). Reaches 150 within 250 episodes on seeds 0, 1, 2, the original Coach's
promise for its CartPole_PAL.
"""

from coach import (
    BasicRLGraphManager,
    LinearSchedule,
    PALAgentParameters,
    PresetValidation,
    QHeadParameters,
)
from coach_presets import _cartpole

agent = PALAgentParameters()
_cartpole.train_in_rounds(agent)
agent.exploration.epsilon_schedule = LinearSchedule(1.0, 0.04, 8000)
agent.network_wrappers["main"] = _cartpole.network(QHeadParameters(), learning_rate=2.3e-3)

graph_manager = BasicRLGraphManager(agent, _cartpole.environment(), _cartpole.schedule(49_000))

validation = PresetValidation(min_reward=150, max_episodes=250, seeds=(0, 1, 2))
