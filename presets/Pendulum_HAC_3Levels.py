"""Hierarchical Actor-Critic on PendulumWithGoals with three HAC levels (Levy et al., 2019).

The top level sets subgoals for the middle one at most every 25 steps, the middle level
subgoals for the bottom one at most every 5; the bottom level applies the torques. The
levels are those of Pendulum_HAC (`_pendulum_hac`), learning at a quarter of its rate (Adam
at 2.5e-4) from replays of their last 50,000 transitions, and evaluated over 30 episodes
instead of 10; the training steps end at the validation's budget.

With replays of 200,000 the lower levels reached fewer of their subgoals late in training
(on seed 2 the bottom one half of them at 72,000 steps, a fifth at 92,000) and seed 2's
final agent won 0.65 of 20 fresh episodes. At 1e-3 the levels' success rate swung from 1.0
to 0.0 and back between evaluations. Screened and rejected: a gradient step every two
actions (seed 1 never reached 0.8 within the budget), and the rate run down to 0 over the
training steps (seed 1 never reached it either; seeds 0 and 2 held 1.0 and 0.95).
"""

from coach import PresetValidation
from coach_presets._pendulum_hac import graph_manager as hac_graph

graph_manager = hac_graph(
    horizons=[5, 5],
    improve_steps=98_000,
    learning_rate=2.5e-4,
    evaluation_episodes=30,
    replay_size=50_000,
)
validation = PresetValidation(min_success_rate=0.8, max_env_steps=100_000, seeds=(0, 1, 2))
