"""Cooperative navigation (MPE simple_spread, 3 agents) with one Clipped PPO agent shared by
the three agent ids: their steps stacked along its batch, one set of parameters for all
(parameter sharing, as in MAPPO's and IPPO's MPE runs, without a centralised critic).

The promise is relative: the mean per-agent evaluation return closes at least 70% of the gap
between a uniformly random policy and a scripted greedy-assignment policy (each agent heads
for the nearest landmark no other agent has claimed), both computed by the golden tests on
the same seeds (`tests/learning/baselines.py`)."""

from coach import MultiAgentGraphManager, PresetValidation
from coach_presets._simple_spread import BUDGET, clipped_ppo, environment, schedule

graph_manager = MultiAgentGraphManager(
    agents={"spread": clipped_ppo("spread", ids=3, batch_size=800)},
    env_params=environment(),
    schedule_params=schedule(),
    mapping={"agent_*": "spread"},
)

validation = PresetValidation(
    gap_closed=0.7,
    baselines="simple_spread",
    per_agent=3,
    max_env_steps=BUDGET,
    seeds=(0, 1, 2),
)
