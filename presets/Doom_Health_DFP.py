"""Direct Future Prediction on ViZDoom's health gathering (Dosovitskiy and Koltun, 2017),
after the original Coach's Doom_Health_DFP; any other scenario of the doom level set by
``-lvl`` whose measurements start with health.

The agent predicts its health 1, 2, 4, ..., 32 steps ahead (changes divided by 30) and acts
to raise it, weighing the last three offsets 0.5, 0.5, 1; it never sees the reward. The
screen as 84x84 luminance, a stack of 4 frames; the Nature CNN for the screen, three layers
of 128 for the health and for the goal, 512 units over their concatenation. A gradient step
on a batch of 64 after every env step, Adam at 1e-4, epsilon from 0.5 to 0 over 10,000
steps. Reaches 1,000 within 70 episodes on seeds 0, 1, 2, the original Coach's promise.
"""

from coach import (
    BasicRLGraphManager,
    DFPAgentParameters,
    EnvironmentEpisodes,
    EnvironmentSteps,
    LinearSchedule,
    MiddlewareParameters,
    PresetValidation,
    ScheduleParameters,
)
from coach.agents.dfp import dfp_network
from coach.environments import DoomEnvironmentParameters
from coach.filters.atari import atari_input_filter
from coach.networks.parameters import NATURE_CNN

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(64),
    improve_steps=EnvironmentEpisodes(100),
    steps_between_evaluation_periods=EnvironmentEpisodes(5),
    evaluation_steps=EnvironmentEpisodes(5),
)

agent = DFPAgentParameters()
agent.algorithm.goal_vector = [1.0]  # health
agent.algorithm.target_scales = [30.0]
agent.algorithm.num_consecutive_playing_steps = EnvironmentSteps(1)
agent.exploration.epsilon_schedule = LinearSchedule(0.5, 0.0, 10_000)
agent.exploration.evaluation_epsilon = 0.0
agent.input_filter = atari_input_filter(obs_type="rgb", clip_rewards=False)
network = dfp_network(conv=NATURE_CNN)
network.input_embedders["observation"].input_rescaling = 255.0
network.input_embedders["observation"].input_offset = 0.5
network.input_embedders["measurements"].input_rescaling = 100.0
network.input_embedders["measurements"].input_offset = 0.5
network.middleware = MiddlewareParameters(scheme=[512], activation="leaky_relu")
agent.network_wrappers["main"] = network

environment = DoomEnvironmentParameters(level="health_gathering")
graph_manager = BasicRLGraphManager(agent, environment, schedule)

validation = PresetValidation(min_reward=1000, max_episodes=70, seeds=(0, 1, 2))
