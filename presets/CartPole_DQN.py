"""DQN on CartPole-v1 (Mnih et al., 2015), tuned after RL Zoo's DQN CartPole settings.

Training happens in rounds (see presets/_cartpole.py): every 256 env steps, 128 gradient
steps on batches of 64. Epsilon falls from 1 to 0.04 over the first 8,000 training steps. It
reaches the maximum reward of 500 within 50,000 env steps (heatup included) on seeds 0, 1, 2.

The learning rate falls in a straight line from RL Zoo's 2.3e-3 to 0 over the 49,000 training
env steps, as SB3's ``lin_`` schedules do: at a constant rate the greedy policy kept moving
after it first scored 500 (seed 1's final agent averaged 250 on 20 episodes); with the rate
run down, the updates that end the run are small and the final agent is the one that held.
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
agent.algorithm.learning_rate_decay = LinearSchedule(1.0, 0.0, 49_000)

graph_manager = BasicRLGraphManager(agent, _cartpole.environment(), _cartpole.schedule(49_000))

validation = PresetValidation(min_reward=475, max_env_steps=50_000, seeds=(0, 1, 2))
