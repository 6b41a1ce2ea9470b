"""What the batch-RL presets share: their networks, the Q-learning settings, the graph.

Each dataset is named with the commands that make it (its recipe), which a batch run shows
when the dataset is missing. Not a preset itself.
"""

from __future__ import annotations

import math

from coach import (
    GymEnvironmentParameters,
    LinearSchedule,
    MiddlewareParameters,
    NetworkParameters,
    QHeadParameters,
    TrainingSteps,
)
from coach.agents.dqn import DQNAgentParameters
from coach.agents.parameters import AgentParameters
from coach.batch.graph_manager import BatchRLGraphManager, BatchRLParameters, batch_schedule
from coach.networks.heads import HeadParameters


def graph(
    agent: AgentParameters, level: str, dataset: str, recipe: str, epochs: int
) -> BatchRLGraphManager:
    """``agent`` learning from ``dataset`` for ``epochs``, evaluated in ``level`` over 10
    episodes after each."""
    return BatchRLGraphManager(
        agent,
        GymEnvironmentParameters(level=level),
        batch_schedule(epochs, evaluation_episodes=10),
        BatchRLParameters(dataset=dataset, dataset_recipe=recipe),
    )


def frozen_policy_recipe(preset: str, experiment: str, train_steps: int, dataset: str) -> str:
    """The commands that record ``dataset``: train ``preset`` for ``train_steps`` env steps,
    then let that agent act for 52,000 more with its learning rate at 0 (its policy frozen),
    recording what it does."""
    return f"""\
    coach -p {preset} -e {experiment} \\
        -cp "schedule.improve_steps=EnvironmentSteps({train_steps})" \\
        -cp "schedule.evaluation_steps=EnvironmentEpisodes(0)"
    coach -p {preset} -crd experiments/{experiment} \\
        -cp "schedule.improve_steps=EnvironmentSteps(52000)" \\
        -cp "schedule.evaluation_steps=EnvironmentEpisodes(0)" \\
        -cp "agent.algorithm.learning_rate_schedule=ConstantSchedule(0.0)" \\
        --record-dataset {dataset}"""


def network(head: HeadParameters | None = None, target: bool = True) -> NetworkParameters:
    """Two hidden layers of 256 (a Q head unless ``head`` is given), learning rate 1e-3."""
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


def settle(agent: AgentParameters, epochs: int, transitions: int) -> None:
    """The learning rate of every network run down to 0 over the gradient steps of
    ``epochs`` passes over a dataset of ``transitions`` (``transitions / batch_size`` each): a
    batch run acts no env step, so its decay counts gradient steps. The final agent is then
    the one the last epochs converge to, not one step's swing of a still large rate."""
    steps = epochs * math.ceil(transitions / agent.algorithm.batch_size)
    agent.algorithm.learning_rate_decay = LinearSchedule(1.0, 0.0, steps)
    agent.algorithm.learning_rate_clock = "training_steps"
