"""Bootstrapped DQN on a 20-state exploration chain (Osband et al., 2016): 20 Q heads that
differ only by their initial weights (every head learns from every transition, as in the
original Coach's chain preset), each episode following one head greedily. The heads disagree
about the states no one has learned about yet, so some head's walk goes further each time;
what it finds spreads to the others.

Each head carries a randomized prior function (Osband et al., 2018) at scale 3:
a frozen random twin added to its output. On the chain the step count is in the observation,
so every state beyond what the agent has seen is new and the trained heads' guesses there
are alike; the priors keep them apart. Without priors no head walked the chain within
2,000 episodes (seed 0); with them the evaluations succeed from episode 470, 430 and 740 on
seeds 0, 1 and 2."""

from coach import BasicRLGraphManager, BootstrappedQHeadParameters
from coach.agents.bootstrapped_dqn import BootstrappedDQNAgentParameters
from coach.exploration.ensemble import BootstrappedParameters
from coach_presets import _exploration_chain as chain

HEADS = 20

agent = BootstrappedDQNAgentParameters()
chain.configure(agent, BootstrappedQHeadParameters(num_heads=HEADS), prior_scale=3.0)
agent.algorithm.bootstrap_probability = 1.0
agent.exploration = BootstrappedParameters(num_heads=HEADS)

graph_manager = BasicRLGraphManager(agent, chain.environment(), chain.schedule())

validation = chain.solved()
