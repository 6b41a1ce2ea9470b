"""What the CartPole batch-RL presets share: their dataset, its recipe, the schedule.

The dataset, ``cartpole/ppo-half-v0``: about 50,000 transitions (210 episodes) acted by a
partly trained Clipped PPO agent, which scores about half the maximum reward (its episodes
average near 250 of 500). The agent acts with its own stochastic policy, so it logs the
probability of every action, and its choices vary where it is unsure. It is made in two
commands (a minute or two on a laptop): train CartPole_ClippedPPO for 3,840 env steps, then
let that agent act for 52,000 more with its learning rate at 0 (its policy frozen),
recording what it does:

    coach -p CartPole_ClippedPPO -e cartpole_ppo_half \
        -cp "schedule.improve_steps=EnvironmentSteps(3840)" \
        -cp "schedule.evaluation_steps=EnvironmentEpisodes(0)"
    coach -p CartPole_ClippedPPO -crd experiments/cartpole_ppo_half/<its folder> \
        -cp "schedule.improve_steps=EnvironmentSteps(52000)" \
        -cp "schedule.evaluation_steps=EnvironmentEpisodes(0)" \
        -cp "agent.algorithm.learning_rate_schedule=ConstantSchedule(0.0)" \
        --record-dataset cartpole/ppo-half-v0

(On seed 0 the recorded episodes average 243.9.) Not a preset itself.
"""

from __future__ import annotations

from coach import (
    GymEnvironmentParameters,
    MiddlewareParameters,
    NetworkParameters,
    QHeadParameters,
    TrainingSteps,
)
from coach.agents.agent import AgentParameters
from coach.agents.dqn import DQNAgentParameters
from coach.graph_managers.batch_rl import BatchRLGraphManager, BatchRLParameters, batch_schedule
from coach.networks.heads import HeadParameters

DATASET = "cartpole/ppo-half-v0"

RECIPE = """\
    coach -p CartPole_ClippedPPO -e cartpole_ppo_half \\
        -cp "schedule.improve_steps=EnvironmentSteps(3840)" \\
        -cp "schedule.evaluation_steps=EnvironmentEpisodes(0)"
    coach -p CartPole_ClippedPPO -crd experiments/cartpole_ppo_half/<its folder> \\
        -cp "schedule.improve_steps=EnvironmentSteps(52000)" \\
        -cp "schedule.evaluation_steps=EnvironmentEpisodes(0)" \\
        -cp "agent.algorithm.learning_rate_schedule=ConstantSchedule(0.0)" \\
        --record-dataset cartpole/ppo-half-v0"""


def batch(dataset: str = DATASET, recipe: str = RECIPE) -> BatchRLParameters:
    return BatchRLParameters(dataset=dataset, dataset_recipe=recipe)


def graph(agent: AgentParameters, epochs: int) -> BatchRLGraphManager:
    """``agent`` learning from the dataset for ``epochs``, evaluated over 10 episodes after
    each."""
    return BatchRLGraphManager(
        agent, environment(), batch_schedule(epochs, evaluation_episodes=10), batch()
    )


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
