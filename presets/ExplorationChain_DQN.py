"""DQN on a 20-state exploration chain (Osband et al., 2016): the baseline that fails. Its
epsilon-greedy exploration (1 to 0.05 over the first 200 episodes, DQN's usual tenth of
training) dithers near the start, finds the small reward at the near end and not the large
one at the far end; ExplorationChain_Bootstrapped_DQN and ExplorationChain_UCB_Q_ensembles,
its twins but for the exploration, find it. Measured over 2,000 episodes: no success on
seeds 0, 1, 2, 3 and 8; on seed 5 a dithering episode (45, epsilon still 0.8) happened to
reach the far end, and DQN kept the way."""

from coach import BasicRLGraphManager, LinearSchedule, PresetValidation, QHeadParameters
from coach.agents.dqn import DQNAgentParameters
from coach_presets import _exploration_chain as chain

agent = DQNAgentParameters()
chain.configure(agent, QHeadParameters())
tenth = (chain.LENGTH + 7) * chain.EPISODES // 10  # env steps of the first 200 episodes
agent.exploration.epsilon_schedule = LinearSchedule(1.0, 0.05, tenth)

graph_manager = BasicRLGraphManager(agent, chain.environment(), chain.schedule())

validation = PresetValidation(max_success_rate=0.1, max_episodes=chain.EPISODES, seeds=(0, 1, 2))
