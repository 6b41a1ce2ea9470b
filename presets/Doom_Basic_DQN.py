"""DQN on ViZDoom's basic scenario (the original Coach's Doom_Basic_DQN): any other scenario
of the doom level set by ``-lvl`` (``coach -p Doom_Basic_DQN -lvl defend_the_center``).

4 game tics per step; the screen as 84x84 luminance, a stack of 4 frames stored once each;
rewards divided by 100 for learning (a kill is worth 100, a tic -1). The Nature CNN, Adam at
2.5e-4, a batch of 32 every 2 steps, the target network refreshed every 500 steps,
epsilon from 1 to 0.05 over 5,000 steps after 1,000 random ones. Reaches 20 within 400
episodes on seeds 0, 1, 2, the original Coach's promise for its Doom_Basic_DQN.

The rate runs down to a fifth over the 400 episodes (and heatup's), where the run ends: at a
constant rate the final agent of seed 1 averaged 10 on 20 episodes; run down to 0, seed 1
learned too slowly to reach 20; from 5e-4, seed 0 diverged.
"""

from coach import (
    BasicRLGraphManager,
    DQNAgentParameters,
    EnvironmentEpisodes,
    EnvironmentSteps,
    LinearSchedule,
    PresetValidation,
    QHeadParameters,
    ScheduleParameters,
)
from coach.environments import DoomEnvironmentParameters
from coach_presets import _doom

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(1000),
    improve_steps=EnvironmentEpisodes(400),
    steps_between_evaluation_periods=EnvironmentSteps(1000),
    evaluation_steps=EnvironmentEpisodes(10),
)

agent = DQNAgentParameters()
agent.algorithm.discount = 0.99
agent.algorithm.batch_size = 32
agent.algorithm.num_consecutive_playing_steps = EnvironmentSteps(2)
agent.algorithm.num_steps_between_copying_online_weights_to_target = EnvironmentSteps(500)
agent.memory.max_size = 100_000
agent.exploration.epsilon_schedule = LinearSchedule(1.0, 0.05, 5000)
agent.algorithm.learning_rate_decay = LinearSchedule(1.0, 0.2, 410)  # 400 and heatup's few
agent.algorithm.learning_rate_clock = "episodes"
agent.input_filter = _doom.input_filter()
agent.network_wrappers["main"] = _doom.network(QHeadParameters(), learning_rate=2.5e-4)

graph_manager = BasicRLGraphManager(agent, DoomEnvironmentParameters(level="basic"), schedule)

validation = PresetValidation(min_reward=20, max_episodes=400, seeds=(0, 1, 2))
