"""Predator and prey (MPE simple_tag: three slower predators, one faster prey, two
obstacles, 25 steps an episode) with a different agent family on each side: one DQN shared
by the three predators (``adversary_*``), one Clipped PPO for the prey (``agent_0``). Any of
Coach's agents can sit on a level beside any other; each keeps its own filters, memory and
exploration, and learns from its own ids' steps.

The level's reward is the predators' (``scored``). The promise: against a prey that learns
to flee, the predators' mean per-agent evaluation return closes at least 30% of the gap
between uniformly random predators and scripted chasers (each runs straight at the prey),
both against a uniformly random prey, computed by the golden tests on the same seeds."""

from coach import (
    ClippedPPOAgentParameters,
    DQNAgentParameters,
    EnvironmentEpisodes,
    EnvironmentSteps,
    LinearSchedule,
    MiddlewareParameters,
    MultiAgentGraphManager,
    NetworkParameters,
    PettingZooEnvironmentParameters,
    PresetValidation,
    QHeadParameters,
    ScheduleParameters,
)
from coach.agents.on_policy import actor_critic_networks
from coach.networks import CategoricalPolicyHeadParameters

BUDGET = 600_000
"""Environment steps (joint steps of the four agents, summed over the copies)."""

predators = DQNAgentParameters()
predators.name = "predators"
predators.algorithm.discount = 0.95
predators.algorithm.batch_size = 256
predators.algorithm.num_consecutive_playing_steps = EnvironmentSteps(240)  # its own steps
predators.algorithm.num_consecutive_training_steps = 8
predators.algorithm.num_steps_between_copying_online_weights_to_target = EnvironmentSteps(2000)
predators.algorithm.double_q = True
predators.memory.max_size = 300_000
predators.exploration.epsilon_schedule = LinearSchedule(1.0, 0.05, 3 * BUDGET // 4)
predators.network_wrappers["main"] = NetworkParameters(
    middleware=MiddlewareParameters(scheme=[128, 128]),
    heads=[QHeadParameters()],
    learning_rate=5e-4,
    gradient_clip_norm=10.0,
    create_target_network=True,
)

prey = ClippedPPOAgentParameters()
prey.name = "prey"
prey.algorithm.discount = 0.95
prey.algorithm.gae_lambda = 0.95
prey.algorithm.epochs = 10
prey.algorithm.batch_size = 400
prey.algorithm.entropy_coefficient = 0.01
prey.memory.rollout_length = 100
prey.network_wrappers = actor_critic_networks(CategoricalPolicyHeadParameters(), 3e-4)

graph_manager = MultiAgentGraphManager(
    agents={"predators": predators, "prey": prey},
    env_params=PettingZooEnvironmentParameters(
        env="mpe2:simple_tag_v3", kwargs={"continuous_actions": False}, num_envs=8
    ),
    schedule_params=ScheduleParameters(
        heatup_steps=EnvironmentSteps(10_000),
        improve_steps=EnvironmentSteps(BUDGET),
        steps_between_evaluation_periods=EnvironmentSteps(25_000),
        evaluation_steps=EnvironmentEpisodes(32),
    ),
    mapping={"adversary_*": "predators", "agent_*": "prey"},
    scored=("adversary_*",),
)

validation = PresetValidation(
    gap_closed=0.3,
    baselines="simple_tag",
    per_agent=3,
    max_env_steps=BUDGET,
    seeds=(0, 1, 2),
)
