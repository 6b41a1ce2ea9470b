"""Wolpertinger on a MuJoCo task discretized into a million actions (Dulac-Arnold et al.,
2015): InvertedPendulum-v5 by default, any task of one action dimension by ``-lvl``. As the
original Coach's preset, the force is split into 1,000,000 evenly spaced values
(`BoxDiscretization`); the actor proposes a point of the force's range, its nearest action
is looked up and taken. DDPG's settings otherwise (RL Zoo's: Gaussian noise of 0.1, the
critic's Adam at 1e-3, batches of 256, 400x300 networks, a gradient step per env step) but
for the actor's rate, 1e-4 as in the DDPG paper (at 1e-3, seed 2's actor saturated at one
end of the range within the first thousand steps and its episodes stayed 3 steps long);
1,000 random steps first. Reaches 500 within 600 episodes and 30,000 env steps on seeds 0,
1, 2 (the original Coach promised 500 within 1,000 episodes)."""

from coach import (
    BasicRLGraphManager,
    ConstantSchedule,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    OutputFilter,
    PresetValidation,
    ScheduleParameters,
)
from coach.agents.wolpertinger import WolpertingerAgentParameters
from coach.exploration.additive_noise import AdditiveNoiseParameters
from coach.filters.action import BoxDiscretization

agent = WolpertingerAgentParameters()
agent.exploration = AdditiveNoiseParameters(
    noise_schedule=ConstantSchedule(0.1), noise_as_percentage_from_action_space=False
)
agent.network_wrappers["actor"].learning_rate = 1e-4
agent.output_filter = OutputFilter(
    action_filters=[BoxDiscretization(num_bins_per_dimension=1_000_000)]
)

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(1000),
    improve_steps=EnvironmentEpisodes(600),
    steps_between_evaluation_periods=EnvironmentSteps(2000),
    evaluation_steps=EnvironmentEpisodes(5),
)
environment = GymEnvironmentParameters(level="InvertedPendulum-v5", level_set="mujoco")
graph_manager = BasicRLGraphManager(agent, environment, schedule)

validation = PresetValidation(
    min_reward=500, max_episodes=600, max_env_steps=30_000, seeds=(0, 1, 2)
)
