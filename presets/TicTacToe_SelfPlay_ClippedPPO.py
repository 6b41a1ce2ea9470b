"""Tic-tac-toe (PettingZoo classic) learned by Clipped PPO in self-play: the game, the seats
and the evaluations of `TicTacToe_SelfPlay_DQN`, with an on-policy agent. The learner moves
only at its turns, in the seat it drew: each of its slots (one per copy) fills its own column
of the rollout block, GAE runs over each slot's own moves, and a block is learned from once
it holds 128 moves per slot. Illegal moves are masked out of the policy's distribution, in
acting and in learning. Its opponents are snapshots taken every 50,000 moves, the 20 newest
kept, and the learning rate falls to zero over the run.

It promises less than the DQN: a win rate of 85% against a random player, without the
DQN's bounds on losses. Measured on seeds 0, 1 and 2, its ``best.pt`` won 184, 178 and 189
of 200 games against a random player and lost 9, 15 and 4. Against minimax it lost 182, 182
and 49. Self-play against its own ever more deterministic snapshots teaches it to beat
them; it does not teach it to block every threat."""

from coach import (
    ClippedPPOAgentParameters,
    LinearSchedule,
    PresetValidation,
)
from coach.agents.on_policy import actor_critic_networks
from coach.networks import CategoricalPolicyHeadParameters
from coach_presets._tictactoe import self_play

BUDGET = 2_000_000
"""Moves of both players, summed over the environment copies (the learner's are half)."""

agent = ClippedPPOAgentParameters()
agent.name = "player"
agent.algorithm.discount = 0.99
agent.algorithm.gae_lambda = 0.95
agent.algorithm.epochs = 10
agent.algorithm.batch_size = 512
agent.algorithm.entropy_coefficient = 0.01
agent.algorithm.learning_rate_schedule = LinearSchedule(3e-4, 0.0, BUDGET // 2)
agent.memory.rollout_length = 128
agent.network_wrappers = actor_critic_networks(
    CategoricalPolicyHeadParameters(), learning_rate=3e-4, scheme=[128, 128], activation="relu"
)

graph_manager = self_play(agent, BUDGET, heatup=0, snapshot_every=50_000, pool_size=20)

validation = PresetValidation(min_success_rate=0.85, max_env_steps=BUDGET, seeds=(0, 1, 2))
