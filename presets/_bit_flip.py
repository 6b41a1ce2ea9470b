"""What BitFlip_DQN and BitFlip_DQN_HER share, so that the pair shows what hindsight replay
adds: 20 bits, DQN after the HER paper's bit-flipping setup (Andrychowicz et al., 2017).
Not a preset itself (its name starts with an underscore).

The Q network reads the bits and the goal (256 units); Adam at 1e-3, batches of 128,
discount 0.98, epsilon 0.2; every 320 env steps (16 episodes), 40 gradient steps, and the
target network refreshed. 100,000 env steps in all (5,000 episodes), evaluated every 4,000
over 50 episodes.
"""

from __future__ import annotations

from coach import (
    ConstantSchedule,
    DQNAgentParameters,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    InputEmbedderParameters,
    MiddlewareParameters,
    NetworkParameters,
    QHeadParameters,
    ScheduleParameters,
)

BITS = 20
BUDGET = 100_000


def schedule() -> ScheduleParameters:
    return ScheduleParameters(
        heatup_steps=EnvironmentSteps(1000),
        improve_steps=EnvironmentSteps(BUDGET - 1000),
        steps_between_evaluation_periods=EnvironmentSteps(4000),
        evaluation_steps=EnvironmentEpisodes(50),
    )


def agent() -> DQNAgentParameters:
    params = DQNAgentParameters()
    params.algorithm.discount = 0.98
    params.algorithm.batch_size = 128
    params.algorithm.num_consecutive_playing_steps = EnvironmentSteps(320)
    params.algorithm.num_consecutive_training_steps = 40
    params.algorithm.num_steps_between_copying_online_weights_to_target = EnvironmentSteps(320)
    params.exploration.epsilon_schedule = ConstantSchedule(0.2)
    params.network_wrappers["main"] = NetworkParameters(
        input_embedders={
            "observation": InputEmbedderParameters(),
            "desired_goal": InputEmbedderParameters(),
        },
        middleware=MiddlewareParameters(scheme=[256]),
        heads=[QHeadParameters()],
        learning_rate=1e-3,
        create_target_network=True,
    )
    return params


def environment() -> GymEnvironmentParameters:
    return GymEnvironmentParameters(level="coach/BitFlip-v0", kwargs={"n_bits": BITS})
