"""Bootstrapped DQN on a 20-state exploration chain (Osband et al., 2016): 20 Q heads that
differ only by their initial weights (every head learns from every transition, as in the
original Coach's chain preset), each episode following one head greedily. Some head walks
to the far end early, and what it finds spreads to the others; ExplorationChain_DQN, its
twin with epsilon-greedy exploration, never gets there."""

from coach import BasicRLGraphManager, BootstrappedQHeadParameters
from coach.agents.bootstrapped_dqn import BootstrappedDQNAgentParameters
from coach.exploration.ensemble import BootstrappedParameters
from coach_presets import _exploration_chain as chain

HEADS = 20

agent = BootstrappedDQNAgentParameters()
chain.configure(agent, BootstrappedQHeadParameters(num_heads=HEADS))
agent.algorithm.bootstrap_probability = 1.0
agent.exploration = BootstrappedParameters(num_heads=HEADS)

graph_manager = BasicRLGraphManager(agent, chain.environment(), chain.schedule())

validation = chain.solved()
