"""What the exploration-chain presets share, after the original Coach's: a chain of 20
states (`coach/ExplorationChain-v0`, 27 steps an episode), 2,000 training episodes, a
greedy evaluation episode every 10. A Q network of 64x64 units learns every 4 env steps
from batches of 32 (discount 0.99, Adam at 2.5e-4), its target refreshed every 500 env
steps. The presets differ in their exploration only. Not a preset itself (its name starts
with an underscore).

Success is reaching the far end of the chain in an episode; walking right all the way earns
10 (the last state pays 1 a step), settling at the near end earns 0.027.

Two departures from the original Coach's chain, each because epsilon-greedy DQN found the
far end without them, so the chain tested nothing:

- The agent sees its state one-hot, not as a thermometer: on the thermometer, which
  generalizes along the chain, DQN found the far end within 750 training episodes on seeds
  0, 1 and 2.
- Which action moves right is drawn per state (``action_mapping_seed``, bsuite's deep sea):
  with action 1 moving right everywhere, a network whose greedy action leans to 1 in states
  it has not learned about walks the chain by chance (DQN, seed 2, episode 447), and an
  untrained ensemble's mean did at the first evaluation.
"""

from __future__ import annotations

from coach import (
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    MiddlewareParameters,
    NetworkParameters,
    PresetValidation,
    ScheduleParameters,
)
from coach.agents.dqn import DQNAgentParameters
from coach.networks import HeadParameters

LENGTH = 20
EPISODES = 2_000


def schedule() -> ScheduleParameters:
    return ScheduleParameters(
        heatup_steps=EnvironmentSteps(LENGTH),
        improve_steps=EnvironmentEpisodes(EPISODES),
        steps_between_evaluation_periods=EnvironmentEpisodes(10),
        evaluation_steps=EnvironmentEpisodes(1),
    )


def configure(agent: DQNAgentParameters, head: HeadParameters) -> None:
    """The chain's training rhythm and a 64x64 Q network with ``head``."""
    agent.algorithm.discount = 0.99
    agent.algorithm.num_consecutive_playing_steps = EnvironmentSteps(4)
    agent.memory.max_size = 1_000_000
    agent.network_wrappers["main"] = NetworkParameters(
        middleware=MiddlewareParameters(scheme=[64, 64]),
        heads=[head],
        learning_rate=2.5e-4,
        create_target_network=True,
    )


def environment() -> GymEnvironmentParameters:
    return GymEnvironmentParameters(
        level="coach/ExplorationChain-v0",
        kwargs={
            "chain_length": LENGTH,
            "max_steps": LENGTH + 7,
            "observation_type": "one_hot",
            "action_mapping_seed": 0,
        },
    )


def solved() -> PresetValidation:
    """Success rate 0.9 within the 2,000 episodes, on seeds 0, 1, 2."""
    return PresetValidation(min_success_rate=0.9, max_episodes=EPISODES, seeds=(0, 1, 2))
