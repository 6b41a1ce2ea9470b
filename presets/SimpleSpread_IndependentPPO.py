"""Cooperative navigation (MPE simple_spread, 3 agents) with independent learners: one
Clipped PPO agent per agent id, each with its own networks, memory and exploration (IPPO
without parameter sharing), reported beside `SimpleSpread_SharedPPO` under the same promise:
the mean per-agent evaluation return closes at least 70% of the gap between a uniformly
random policy and a scripted greedy-assignment one."""

from coach import MultiAgentGraphManager, PresetValidation
from coach_presets._simple_spread import BUDGET, clipped_ppo, environment, schedule

IDS = ("agent_0", "agent_1", "agent_2")

graph_manager = MultiAgentGraphManager(
    agents={agent_id: clipped_ppo(agent_id, ids=1, batch_size=400) for agent_id in IDS},
    env_params=environment(),
    schedule_params=schedule(),
    mapping={agent_id: agent_id for agent_id in IDS},
)

validation = PresetValidation(
    gap_closed=0.7,
    baselines="simple_spread",
    per_agent=3,
    max_env_steps=BUDGET,
    seeds=(0, 1, 2),
)
