"""Neural Episodic Control on ViZDoom's basic scenario (Pritzel et al., 2017); any other
scenario of the doom level set by ``-lvl``.

Doom_Basic_DQN's screen (84x84 luminance, a stack of 4) and rewards (divided by 100); the
Nature CNN and 512 units to keys of 64 numbers, 50 neighbours per lookup in a dictionary of
up to 100,000 entries per action, 100-step returns; a batch of 32 every 4 env steps, Adam at
1e-5 (the paper's rate is of this order: the dictionary learns fast, the keys must move
slowly; at 2.5e-4 the stored keys go stale and it did not learn), epsilon from 0.5 to 0.05
over 5,000 steps after 1,000 random ones. Reaches 20 within 400 episodes on seeds 0, 1, 2,
the promise of the original Coach's Doom_Basic_DQN.

The rate runs down to 0 over the 400 episodes (and heatup's), where the run ends: at a
constant rate the final agent of seed 1 averaged 11 on 20 episodes; run down, the final
agents of seeds 0, 1 and 2 average 56.5, 50.6 and 68.6.
"""

from coach import (
    BasicRLGraphManager,
    EnvironmentEpisodes,
    EnvironmentSteps,
    LinearSchedule,
    NECAgentParameters,
    PresetValidation,
    ScheduleParameters,
)
from coach.environments import DoomEnvironmentParameters
from coach.networks import KeyHeadParameters
from coach_presets import _doom

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(1000),
    improve_steps=EnvironmentEpisodes(400),
    steps_between_evaluation_periods=EnvironmentSteps(1000),
    evaluation_steps=EnvironmentEpisodes(10),
)

agent = NECAgentParameters()
agent.algorithm.discount = 0.99
agent.algorithm.dnd_size = 100_000
agent.memory.max_size = 100_000
agent.exploration.epsilon_schedule = LinearSchedule(0.5, 0.05, 5000)
agent.exploration.evaluation_epsilon = 0.0
agent.algorithm.learning_rate_decay = LinearSchedule(1.0, 0.0, 410)  # 400 and heatup's few
agent.algorithm.learning_rate_clock = "episodes"
agent.input_filter = _doom.input_filter()
agent.network_wrappers["main"] = _doom.network(
    KeyHeadParameters(size=64), learning_rate=1e-5, create_target_network=False
)

graph_manager = BasicRLGraphManager(agent, DoomEnvironmentParameters(level="basic"), schedule)

validation = PresetValidation(min_reward=20, max_episodes=400, seeds=(0, 1, 2))
