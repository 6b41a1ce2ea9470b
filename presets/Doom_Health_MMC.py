"""Mixed Monte Carlo on ViZDoom's health gathering (Ostrovski et al., 2017), after the
original Coach's Doom_Health_MMC; any other scenario of the doom level set by ``-lvl``.

Doom_Basic_DQN's network and filters (the screen as 84x84 luminance, a stack of 4; the
Nature CNN), rewards divided by 100 (a tic alive is worth 1, death -100), each target mixing
in a tenth of the step's episode return. A batch of 32 after every env step with the squared
error, Adam at 2.5e-4, the target network refreshed every 1,000 steps, epsilon from 0.5 to
0 over 10,000 steps after 1,000 random ones, each evaluation 5 episodes.

The original Coach promised nothing for this preset. Its golden runs reach 500 (a random
policy scores about 400: 4 a step alive, -100 for dying) within 150 episodes on seeds 0, 1,
2, best.pt scoring 563.6, 922.0 and 661.6 on 20 fresh episodes; 600 held on seeds 1 and 2
only. Mixed Monte Carlo learns this scenario slowly and unevenly (its best evaluations
788, 1770 and 1094); Doom_Health_DFP, which predicts the health itself, reaches 1,000
within 70 episodes.
"""

from coach import (
    BasicRLGraphManager,
    EnvironmentEpisodes,
    EnvironmentSteps,
    LinearSchedule,
    MMCAgentParameters,
    PresetValidation,
    QHeadParameters,
    ScheduleParameters,
)
from coach.environments import DoomEnvironmentParameters
from coach_presets import _doom

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(1000),
    improve_steps=EnvironmentSteps(100_000),
    steps_between_evaluation_periods=EnvironmentEpisodes(5),
    evaluation_steps=EnvironmentEpisodes(5),
)

agent = MMCAgentParameters()
agent.algorithm.discount = 0.99
agent.algorithm.batch_size = 32
agent.algorithm.loss = "mse"
agent.algorithm.num_consecutive_playing_steps = EnvironmentSteps(1)
agent.algorithm.num_steps_between_copying_online_weights_to_target = EnvironmentSteps(1000)
agent.memory.max_size = 100_000
agent.exploration.epsilon_schedule = LinearSchedule(0.5, 0.0, 10_000)
agent.exploration.evaluation_epsilon = 0.0
agent.input_filter = _doom.input_filter()
agent.network_wrappers["main"] = _doom.network(QHeadParameters(), learning_rate=2.5e-4)

graph_manager = BasicRLGraphManager(
    agent, DoomEnvironmentParameters(level="health_gathering"), schedule
)

validation = PresetValidation(min_reward=500, max_episodes=150, seeds=(0, 1, 2))
