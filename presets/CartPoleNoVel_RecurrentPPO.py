"""Recurrent Clipped PPO on CartPole without velocities (sb3-contrib's RecurrentPPO, with RL
Zoo's ppo_lstm settings for CartPoleNoVel-v1; see `presets/_cartpole_novel.py`).

The actor and the critic each read the two positions through an LSTM of 64 units and a
64-unit ReLU layer, and carry one hidden state per env copy from step to step, zeroed where
an episode starts. Each block column of 32 steps is one training sequence, unrolled from the
hidden state it began with. Its control, `CartPoleNoVel_ClippedPPO`, is the same agent
without the LSTM, and stays far below.
"""

from coach import BasicRLGraphManager, PresetValidation, RecurrentParameters
from coach.agents.on_policy import actor_critic_networks
from coach.networks import CategoricalPolicyHeadParameters
from coach_presets._cartpole_novel import BUDGET, clipped_ppo, environment, schedule

agent = clipped_ppo()
agent.network_wrappers = actor_critic_networks(
    CategoricalPolicyHeadParameters(),
    learning_rate=1e-3,
    scheme=[64],
    activation="relu",
    recurrent=RecurrentParameters(cell="lstm", size=64),
)

graph_manager = BasicRLGraphManager(agent, environment(), schedule())

validation = PresetValidation(min_reward=475, max_env_steps=BUDGET, seeds=(0, 1, 2))
