"""What the CartPole batch-RL presets share: their dataset, its recipe, the schedule.

The dataset, ``cartpole/dqn-half-v0``: about 50,000 transitions (200 episodes) acted by a
partly trained DQN agent, which scores about half the maximum reward (a mean near 250 of
500), with epsilon 0.05 so that it logs its action probabilities with some spread. It is
made in two commands (a minute on a laptop):

    coach -p CartPole_DQN -e cartpole_dqn_half -cp "schedule.improve_steps=EnvironmentSteps(15000)"
    coach -p CartPole_DQN -crd experiments/cartpole_dqn_half/<its folder> --evaluate 200 \\
        -cp "agent.exploration.evaluation_epsilon=0.05" --record-dataset cartpole/dqn-half-v0

(CartPole_DQN on seed 0 after 16,000 env steps; its greedy evaluation there is 299.5, and
the 200 recorded episodes average 254.5.) Not a preset itself.
"""

from __future__ import annotations

from coach import (
    EnvironmentEpisodes,
    GymEnvironmentParameters,
    MiddlewareParameters,
    NetworkParameters,
    QHeadParameters,
    TrainingSteps,
)
from coach.agents.dqn import DQNAgentParameters
from coach.graph_managers.batch_rl import BatchRLParameters, batch_schedule
from coach.networks.heads import HeadParameters

DATASET = "cartpole/dqn-half-v0"

RECIPE = """\
    coach -p CartPole_DQN -e cartpole_dqn_half -cp "schedule.improve_steps=EnvironmentSteps(15000)"
    coach -p CartPole_DQN -crd experiments/cartpole_dqn_half/<its folder> --evaluate 200 \\
        -cp "agent.exploration.evaluation_epsilon=0.05" --record-dataset cartpole/dqn-half-v0"""


def batch(dataset: str = DATASET, recipe: str = RECIPE) -> BatchRLParameters:
    return BatchRLParameters(dataset=dataset, dataset_recipe=recipe)


def schedule(epochs: int):  # type: ignore[no-untyped-def]
    return batch_schedule(epochs, evaluation_episodes=10)


def network(head: HeadParameters | None = None, target: bool = True) -> NetworkParameters:
    return NetworkParameters(
        middleware=MiddlewareParameters(scheme=[256, 256]),
        heads=[head or QHeadParameters()],
        learning_rate=1e-3,
        create_target_network=target,
    )


def q_learning(agent: DQNAgentParameters) -> None:
    """Batches of 128; the target network refreshed every 100 gradient steps."""
    agent.algorithm.discount = 0.99
    agent.algorithm.batch_size = 128
    agent.algorithm.num_steps_between_copying_online_weights_to_target = TrainingSteps(100)
    agent.exploration.evaluation_epsilon = 0.0
    agent.network_wrappers["main"] = network()


def environment() -> GymEnvironmentParameters:
    return GymEnvironmentParameters(level="CartPole-v1")


EVALUATION = EnvironmentEpisodes(10)
