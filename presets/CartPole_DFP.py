"""Direct Future Prediction on CartPole-v1 (Dosovitskiy and Koltun, 2017), after the original
Coach's CartPole_DFP: the episode's return so far is the one measurement
(``measure_return=True``) and the goal is to raise it, weighing the changes 8, 16 and 32 steps
ahead (0.5, 0.5, 1); after the episode's end the return stays as it ended. A gradient step
on a batch of 64 after every env step, Adam at 1e-4, epsilon from 0.5 to 0.01 over 3,000
steps. Reaches 120 within 250 episodes on seeds 0, 1, 2, the original Coach's promise.
"""

from coach import (
    BasicRLGraphManager,
    DFPAgentParameters,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    LinearSchedule,
    PresetValidation,
    ScheduleParameters,
)

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(100),
    improve_steps=EnvironmentSteps(60_000),
    steps_between_evaluation_periods=EnvironmentSteps(1000),
    evaluation_steps=EnvironmentEpisodes(5),
)

agent = DFPAgentParameters()
agent.algorithm.goal_vector = [1.0]  # the return so far
agent.algorithm.targets_after_episode_end = "last_step"
agent.algorithm.num_consecutive_playing_steps = EnvironmentSteps(1)
agent.exploration.epsilon_schedule = LinearSchedule(0.5, 0.01, 3000)
agent.exploration.evaluation_epsilon = 0.0
network = agent.network_wrappers["main"]
network.input_embedders["measurements"].input_rescaling = 100.0
network.learning_rate = 1e-4

environment = GymEnvironmentParameters(level="CartPole-v1", measure_return=True)
graph_manager = BasicRLGraphManager(agent, environment, schedule)

validation = PresetValidation(min_reward=120, max_episodes=250, seeds=(0, 1, 2))
