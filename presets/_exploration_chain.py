"""What the exploration-chain presets share, after the original Coach's: a chain of 20
states (`coach/ExplorationChain-v0`, 27 steps an episode), 2,000 training episodes, a
greedy evaluation episode every 10. A Q network of 64x64 units learns every 4 env steps
from batches of 32 (discount 0.99, Adam at 1e-3), its target refreshed every 100 env steps.
The presets differ in their exploration only. Not a preset itself (its name starts with an
underscore).

Success is reaching the far end of the chain in an episode; walking right all the way earns
10 (the last state pays 1 a step), settling at the near end earns 0.027.

Three departures from the original Coach's chain. The first two because epsilon-greedy DQN
found the far end without them, so the chain tested nothing; the third for the ensembles:

- Which action moves right is drawn per state (``action_mapping_seed``, bsuite's deep sea):
  with action 1 moving right everywhere, a network whose greedy action leans to 1 in states
  it has not learned about walks the chain by chance (DQN, seed 2, episode 447), and an
  untrained ensemble's mean did at the first evaluation.
- The agent sees its state and the step count, one-hot over the pairs (``timed_one_hot``,
  the deep sea's grid), not its state as a thermometer. On the thermometer, which
  generalizes along the chain, DQN found the far end within 750 training episodes on seeds
  0, 1 and 2. On the state alone, one-hot, it still did on 4 of 10 seeds: a network's guess
  for a state it has not seen sits near the average of what it has learned, above the states
  at the edge of what it has seen, so greedy steps head for the unseen. With the step in the
  observation both actions lead to states not seen before, and that pull is gone.
- Adam at 1e-3 and a target refreshed every 100 env steps (the original: 2.5e-4 and 500):
  what an ensemble learns at the far end has 27 steps to travel back, one target refresh a
  step. At the original's pace, UCB's bonus did not point the way within 2,000 episodes.
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


def configure(agent: DQNAgentParameters, head: HeadParameters, prior_scale: float = 0.0) -> None:
    """The chain's training rhythm and a 64x64 Q network with ``head`` (and a randomized
    prior function at ``prior_scale``, none at 0)."""
    agent.algorithm.discount = 0.99
    agent.algorithm.num_consecutive_playing_steps = EnvironmentSteps(4)
    agent.memory.max_size = 1_000_000
    agent.network_wrappers["main"] = NetworkParameters(
        middleware=MiddlewareParameters(scheme=[64, 64]),
        heads=[head],
        learning_rate=1e-3,
        create_target_network=True,
        prior_scale=prior_scale,
    )
    agent.algorithm.num_steps_between_copying_online_weights_to_target = EnvironmentSteps(100)


def environment() -> GymEnvironmentParameters:
    return GymEnvironmentParameters(
        level="coach/ExplorationChain-v0",
        kwargs={
            "chain_length": LENGTH,
            "max_steps": LENGTH + 7,
            "observation_type": "timed_one_hot",
            "action_mapping_seed": 0,
        },
    )


def solved() -> PresetValidation:
    """Success rate 0.9 within the 2,000 episodes, on seeds 0, 1, 2."""
    return PresetValidation(min_success_rate=0.9, max_episodes=EPISODES, seeds=(0, 1, 2))
