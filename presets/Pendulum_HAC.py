"""Hierarchical Actor-Critic on PendulumWithGoals (Levy et al., 2019): two HAC levels on DDPG.

The top level sets subgoals (angle and velocity) for the bottom one, which applies torques
for at most 10 steps per subgoal. The levels are described in `_pendulum_hac`.
"""

from coach import PresetValidation
from coach_presets._pendulum_hac import graph_manager as hac_graph

graph_manager = hac_graph(horizons=[10], improve_steps=198_000)
validation = PresetValidation(min_success_rate=0.8, max_env_steps=100_000, seeds=(0, 1, 2))
