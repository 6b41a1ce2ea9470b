"""What the SimpleSpread presets share: MPE's simple_spread (three agents, three landmarks,
25 steps an episode, discrete moves) and one Clipped PPO agent's settings, after the MAPPO
study's MPE settings (Yu et al., "The surprising effectiveness of PPO in cooperative
multi-agent games", 2022): GAE lambda 0.95, discount 0.99, 10 epochs, learning rate 7e-4
falling to zero, entropy bonus 0.01; 16 environment copies, blocks of 50 steps."""

from coach import (
    ClippedPPOAgentParameters,
    EnvironmentEpisodes,
    EnvironmentSteps,
    LinearSchedule,
    PettingZooEnvironmentParameters,
    ScheduleParameters,
)
from coach.agents.on_policy import actor_critic_networks
from coach.networks import CategoricalPolicyHeadParameters

BUDGET = 2_000_000
"""Environment steps (joint steps of all three agents, summed over the copies)."""


def schedule() -> ScheduleParameters:
    return ScheduleParameters(
        heatup_steps=EnvironmentSteps(0),
        improve_steps=EnvironmentSteps(BUDGET),
        steps_between_evaluation_periods=EnvironmentSteps(50_000),
        evaluation_steps=EnvironmentEpisodes(32),
    )


def environment() -> PettingZooEnvironmentParameters:
    return PettingZooEnvironmentParameters(
        env="mpe2:simple_spread_v3",
        kwargs={"N": 3, "local_ratio": 0.5, "max_cycles": 25, "continuous_actions": False},
        num_envs=16,
    )


def clipped_ppo(name: str, ids: int, batch_size: int) -> ClippedPPOAgentParameters:
    """The Clipped PPO agent ``name`` playing ``ids`` of the agent ids: its schedules run
    over its own steps, ``ids`` per environment step; its blocks (50 steps of its slots in
    each of the 16 copies) are learned from in minibatches of ``batch_size`` steps."""
    agent = ClippedPPOAgentParameters()
    agent.name = name
    agent.algorithm.discount = 0.99
    agent.algorithm.gae_lambda = 0.95
    agent.algorithm.epochs = 10
    agent.algorithm.batch_size = batch_size
    agent.algorithm.entropy_coefficient = 0.01
    agent.algorithm.learning_rate_schedule = LinearSchedule(7e-4, 0.0, ids * BUDGET)
    agent.memory.rollout_length = 50
    agent.network_wrappers = actor_critic_networks(
        CategoricalPolicyHeadParameters(), learning_rate=7e-4
    )
    return agent
