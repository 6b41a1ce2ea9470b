"""Tic-tac-toe (PettingZoo classic) learned by DQN (double Q) in self-play: the learner takes
either seat at random every game, against opponents drawn from a pool of its own past snapshots
(one every 5,000 of its moves, the five newest kept). Illegal moves are masked out of its
choices, its random exploration and its targets (the observation's ``action_mask``).

Evaluations play 500 games against a uniformly random (legal) opponent; their success rate
is the win rate, and ``best.pt`` the evaluation that loses fewest and then wins most (the
later one of equals). The golden tests then play ``best.pt``
200 games as either player against a random player (it must win at least 85% and lose at
most 2%) and against a minimax player (it must lose at most 10%)."""

from coach import (
    DQNAgentParameters,
    EnvironmentSteps,
    LinearSchedule,
    MiddlewareParameters,
    NetworkParameters,
    PresetValidation,
    QHeadParameters,
)
from coach_presets._tictactoe import self_play

BUDGET = 500_000
"""Moves of both players, summed over the environment copies."""

agent = DQNAgentParameters()
agent.name = "player"
agent.algorithm.discount = 0.99
agent.algorithm.double_q = True
agent.algorithm.batch_size = 128
agent.algorithm.num_consecutive_playing_steps = EnvironmentSteps(16)
agent.algorithm.num_consecutive_training_steps = 4
agent.algorithm.num_steps_between_copying_online_weights_to_target = EnvironmentSteps(1000)
agent.memory.max_size = 100_000
agent.exploration.epsilon_schedule = LinearSchedule(1.0, 0.05, 80_000)
agent.exploration.evaluation_epsilon = 0.0
agent.network_wrappers["main"] = NetworkParameters(
    middleware=MiddlewareParameters(scheme=[128, 128]),
    heads=[QHeadParameters()],
    learning_rate=5e-4,
    gradient_clip_norm=10.0,
    create_target_network=True,
)

graph_manager = self_play(agent, BUDGET, heatup=5_000, snapshot_every=5_000, pool_size=5)

validation = PresetValidation(
    min_success_rate=0.85, max_env_steps=BUDGET, seeds=(0, 1, 2), baselines="tictactoe"
)
