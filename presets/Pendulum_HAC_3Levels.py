"""Hierarchical Actor-Critic on PendulumWithGoals with three HAC levels (Levy et al., 2019).

The top level sets subgoals for the middle one at most every 25 steps, the middle level
subgoals for the bottom one at most every 5; the bottom level applies the torques. The
levels are those of Pendulum_HAC (`_pendulum_hac`), learning at a quarter of its rate (Adam
at 2.5e-4), and evaluated over 30 episodes instead of 10. At 1e-3 the three levels' success
rate swung from 1.0 to 0.0 and back between evaluations; at 5e-4 the final agent of seed 0
won 0.55 of 20 fresh episodes, and at 2.5e-4 with evaluations of 10 episodes the best.pt of
seed 2, chosen on a lucky evaluation, won 0.7. The training steps end at the validation's
budget.
"""

from coach import PresetValidation
from coach_presets._pendulum_hac import graph_manager as hac_graph

graph_manager = hac_graph(
    horizons=[5, 5], improve_steps=98_000, learning_rate=2.5e-4, evaluation_episodes=30
)
validation = PresetValidation(min_success_rate=0.8, max_env_steps=100_000, seeds=(0, 1, 2))
