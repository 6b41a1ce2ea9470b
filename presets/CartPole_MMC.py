"""Mixed Monte Carlo on CartPole-v1 (Ostrovski et al., 2017): CartPole_DQN's settings
(rounds of 128 gradient steps on batches of 64 every 256 env steps, epsilon from 1 to 0.04
over 8,000 steps, two layers of 256), each target mixing in a tenth of the step's episode
return. Reaches 150 within 300 episodes on seeds 0, 1, 2, the original Coach's promise for
its CartPole_MMC.
"""

from coach import (
    BasicRLGraphManager,
    LinearSchedule,
    MMCAgentParameters,
    PresetValidation,
    QHeadParameters,
)
from coach_presets import _cartpole

agent = MMCAgentParameters()
_cartpole.train_in_rounds(agent)
agent.exploration.epsilon_schedule = LinearSchedule(1.0, 0.04, 8000)
agent.network_wrappers["main"] = _cartpole.network(QHeadParameters(), learning_rate=2.3e-3)

graph_manager = BasicRLGraphManager(agent, _cartpole.environment(), _cartpole.schedule(49_000))

validation = PresetValidation(min_reward=150, max_episodes=300, seeds=(0, 1, 2))
