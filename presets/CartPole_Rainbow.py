"""Rainbow on CartPole-v1 (Hessel et al., 2018): C51 with double Q-learning, 3-step returns,
prioritized replay, a dueling head and noisy layers (so no epsilon)."""

from coach import (
    BasicRLGraphManager,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    LinearSchedule,
    MiddlewareParameters,
    NetworkParameters,
    PresetValidation,
    ScheduleParameters,
)
from coach.agents.rainbow import RainbowAgentParameters
from coach.networks import CategoricalQHeadParameters

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(1000),
    improve_steps=EnvironmentSteps(99_000),
    steps_between_evaluation_periods=EnvironmentSteps(2500),
    evaluation_steps=EnvironmentEpisodes(10),
)

agent = RainbowAgentParameters()
agent.algorithm.batch_size = 64
agent.algorithm.n_step = 3
agent.algorithm.num_consecutive_playing_steps = EnvironmentSteps(256)
agent.algorithm.num_consecutive_training_steps = 128
agent.algorithm.num_steps_between_copying_online_weights_to_target = EnvironmentSteps(256)
agent.memory.max_size = 100_000
agent.memory.alpha = 0.5
# Beta reaches 1 (full importance correction) by the end: ~50k sampling calls in 99k steps.
agent.memory.beta_schedule = LinearSchedule(0.4, 1.0, 50_000)
agent.network_wrappers["main"] = NetworkParameters(
    middleware=MiddlewareParameters(scheme=[256, 256]),
    heads=[
        CategoricalQHeadParameters(num_atoms=51, v_min=0.0, v_max=100.0, dueling=True, noisy=True)
    ],
    learning_rate=1e-3,
    gradient_clip_norm=10.0,
    create_target_network=True,
)

environment = GymEnvironmentParameters(level="CartPole-v1")

graph_manager = BasicRLGraphManager(agent, environment, schedule)

validation = PresetValidation(min_reward=475, max_env_steps=100_000, seeds=(0, 1, 2))
