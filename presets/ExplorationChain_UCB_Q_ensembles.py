"""UCB exploration over an ensemble of Q heads on a 20-state exploration chain (Chen et al.,
2017, "UCB Exploration via Q-Ensembles"): the 20 heads of
ExplorationChain_Bootstrapped_DQN, every step acting on their mean plus 10 times their
spread (the original Coach's chain preset), so actions the heads disagree on get tried. The
heads carry ExplorationChain_Bootstrapped_DQN's randomized priors: without them, or at the
original Coach's learning pace, UCB did not reach the far end within 2,000 episodes on seed
0; with both, the evaluations succeed from episode 770, 950 and 740 on seeds 0, 1 and 2."""

from coach import BasicRLGraphManager, BootstrappedQHeadParameters
from coach.agents.bootstrapped_dqn import BootstrappedDQNAgentParameters
from coach.exploration.ensemble import UCBParameters
from coach_presets import _exploration_chain as chain

agent = BootstrappedDQNAgentParameters()
chain.configure(agent, BootstrappedQHeadParameters(num_heads=20), prior_scale=3.0)
agent.algorithm.bootstrap_probability = 1.0
agent.exploration = UCBParameters(c=10.0)

graph_manager = BasicRLGraphManager(agent, chain.environment(), chain.schedule())

validation = chain.solved()
