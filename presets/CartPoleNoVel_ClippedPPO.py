"""Clipped PPO without memory on CartPole without velocities: the control of
`CartPoleNoVel_RecurrentPPO`, the same agent and budget with feed-forward 64x64 ReLU
networks in place of the LSTM. From the positions alone a feed-forward policy cannot tell
which way the pole moves, and it stays far below the recurrent agent.
"""

from coach import BasicRLGraphManager, PresetValidation
from coach.agents.on_policy import actor_critic_networks
from coach.networks import CategoricalPolicyHeadParameters
from coach_presets._cartpole_novel import BUDGET, clipped_ppo, environment, schedule

agent = clipped_ppo()
agent.network_wrappers = actor_critic_networks(
    CategoricalPolicyHeadParameters(), learning_rate=1e-3, scheme=[64, 64], activation="relu"
)

graph_manager = BasicRLGraphManager(agent, environment(), schedule())

validation = PresetValidation(max_reward=200, max_env_steps=BUDGET, seeds=(0, 1, 2))
