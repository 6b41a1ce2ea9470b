"""Recurrent Double DQN with stored sequences and burn-in (R2D2, Kapturowski et al., 2019) on
CartPole without velocities (see `presets/_cartpole_novel.py` for the task).

Eight env copies act with an LSTM Q network (64 units, then a 64-unit ReLU layer) from
each copy's hidden state, exploring e-greedily. The replay keeps sequences of 20 steps, each
sharing 10 with the previous one of its copy, with the hidden state they began from,
sampled by priority. Every 64 env steps, 8 gradient steps on 32 sequences: the first 5
steps of each only bring the state up to date (burn-in), the other 15 are regressed on
3-step double-Q targets.

Adam's rate runs down from 5e-4 to 0 over the training steps, on a replay of the last 30,000
transitions: at a constant rate on 100,000 the final agents of seeds 1 and 2 averaged 96 and
128 on 20 episodes; run down on 100,000, seed 1's still fell to 379; at 2.5e-4, to 113.
"""

from coach import (
    BasicRLGraphManager,
    EGreedyParameters,
    EnvironmentEpisodes,
    EnvironmentSteps,
    InputFilter,
    LinearSchedule,
    MiddlewareParameters,
    NetworkParameters,
    PresetValidation,
    R2D2AgentParameters,
    RecurrentParameters,
    ScheduleParameters,
    SequenceReplayParameters,
)
from coach.filters.observation import (
    ObservationNormalizationFilter,
    ObservationSelectEntriesFilter,
)
from coach_presets._cartpole_novel import POSITIONS, environment

BUDGET = 300_000

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(5_000),
    improve_steps=EnvironmentSteps(BUDGET - 5_000),
    steps_between_evaluation_periods=EnvironmentSteps(10_000),
    evaluation_steps=EnvironmentEpisodes(10),
)

agent = R2D2AgentParameters()
agent.algorithm.discount = 0.99
agent.algorithm.n_step = 3
agent.algorithm.learning_rate_decay = LinearSchedule(1.0, 0.0, BUDGET - 5_000)
agent.algorithm.burn_in = 5
agent.algorithm.batch_size = 32
agent.algorithm.num_consecutive_playing_steps = EnvironmentSteps(64)
agent.algorithm.num_consecutive_training_steps = 8
agent.algorithm.num_steps_between_copying_online_weights_to_target = EnvironmentSteps(2_000)
agent.memory = SequenceReplayParameters(max_size=30_000, sequence_length=20, overlap=10, alpha=0.6)
agent.exploration = EGreedyParameters(
    epsilon_schedule=LinearSchedule(1.0, 0.02, 50_000), evaluation_epsilon=0.0
)
agent.network_wrappers = {
    "main": NetworkParameters(
        middleware=MiddlewareParameters(scheme=[64], recurrent=RecurrentParameters(size=64)),
        learning_rate=5e-4,
        gradient_clip_norm=10.0,
        create_target_network=True,
    )
}
agent.input_filter = InputFilter(
    observation_filters={
        "observation": [
            ObservationSelectEntriesFilter(POSITIONS),
            ObservationNormalizationFilter(clip=10.0),
        ]
    }
)

graph_manager = BasicRLGraphManager(agent, environment(), schedule)

validation = PresetValidation(min_reward=475, max_env_steps=BUDGET, seeds=(0, 1, 2))
