"""The training rhythm the CartPole Q-learning presets share (after RL Zoo's DQN CartPole).

Training happens in rounds: every 256 env steps, 128 gradient steps on batches of 64 with
the gradient norm clipped at 10, and the target network is refreshed once per round.
Budgets: 1,000 heatup steps, then up to 99,000 training steps, evaluated every 2,500 over 10
episodes. Not a preset itself (its name starts with an underscore).
"""

from __future__ import annotations

from coach import (
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    MiddlewareParameters,
    NetworkParameters,
    ScheduleParameters,
)
from coach.agents.dqn import DQNAgentParameters
from coach.networks import HeadParameters


def schedule(improve_steps: int = 99_000) -> ScheduleParameters:
    return ScheduleParameters(
        heatup_steps=EnvironmentSteps(1000),
        improve_steps=EnvironmentSteps(improve_steps),
        steps_between_evaluation_periods=EnvironmentSteps(2500),
        evaluation_steps=EnvironmentEpisodes(10),
    )


def train_in_rounds(agent: DQNAgentParameters) -> None:
    """Set the rounds of training and the replay size on any Q agent."""
    agent.algorithm.discount = 0.99
    agent.algorithm.batch_size = 64
    agent.algorithm.num_consecutive_playing_steps = EnvironmentSteps(256)
    agent.algorithm.num_consecutive_training_steps = 128
    agent.algorithm.num_steps_between_copying_online_weights_to_target = EnvironmentSteps(256)
    agent.memory.max_size = 100_000


def network(head: HeadParameters, learning_rate: float) -> NetworkParameters:
    """Two hidden layers of 256 and the given head."""
    return NetworkParameters(
        middleware=MiddlewareParameters(scheme=[256, 256]),
        heads=[head],
        learning_rate=learning_rate,
        gradient_clip_norm=10.0,
        create_target_network=True,
    )


def environment() -> GymEnvironmentParameters:
    return GymEnvironmentParameters(level="CartPole-v1")
