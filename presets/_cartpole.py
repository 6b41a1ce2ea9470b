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
    LinearSchedule,
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


def settle(agent: DQNAgentParameters, improve_steps: int = 99_000) -> None:
    """What makes a Q agent's final agent hold on CartPole: its learning rate run down to 0
    over the ``improve_steps`` training env steps, and a replay of the last 10,000
    transitions (CleanRL's size for CartPole).

    With RL Zoo's 100,000 (the whole run) the final agents of CartPole_DDQN on seeds 0 to 5
    drifted off the track after 100 to 300 steps on 2 seeds in 6, even with the rate run
    down: once the policy is good, the states of a drift are a vanishing share of the whole
    run's replay, and the agent forgets them. Measured on CartPole_DDQN, seeds 0 to 5, the
    last evaluation at 100,000 env steps: every seed at 500 with 10,000; 5 of 6 with 20,000
    and 40,000; 4 of 6 with 100,000.
    """
    agent.algorithm.learning_rate_decay = LinearSchedule(1.0, 0.0, improve_steps)
    agent.memory.max_size = 10_000


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
