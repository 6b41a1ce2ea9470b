"""Rainbow on LunarLander-v3 (Hessel et al., 2018): C51 over returns in [-100, 100] with
double Q-learning, 3-step returns, prioritized replay, a dueling head and noisy layers."""

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
    improve_steps=EnvironmentSteps(299_000),
    steps_between_evaluation_periods=EnvironmentSteps(10_000),
    evaluation_steps=EnvironmentEpisodes(10),
)

agent = RainbowAgentParameters()
agent.algorithm.discount = 0.99
agent.algorithm.batch_size = 128
agent.algorithm.n_step = 3
agent.algorithm.num_consecutive_playing_steps = EnvironmentSteps(4)
agent.algorithm.num_consecutive_training_steps = 4
agent.algorithm.num_steps_between_copying_online_weights_to_target = EnvironmentSteps(1000)
agent.memory.max_size = 100_000
agent.memory.alpha = 0.5
agent.memory.beta_schedule = LinearSchedule(0.4, 1.0, 300_000)
agent.network_wrappers["main"] = NetworkParameters(
    middleware=MiddlewareParameters(scheme=[256, 256]),
    heads=[
        CategoricalQHeadParameters(
            num_atoms=51, v_min=-100.0, v_max=100.0, dueling=True, noisy=True
        )
    ],
    learning_rate=6.3e-4,
    gradient_clip_norm=10.0,
    create_target_network=True,
)

environment = GymEnvironmentParameters(level="LunarLander-v3")

graph_manager = BasicRLGraphManager(agent, environment, schedule)

validation = PresetValidation(min_reward=200, max_env_steps=300_000)
