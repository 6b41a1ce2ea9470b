"""Discrete BCQ (DDQN-BCQ, Fujimoto et al., 2019) on a fixed Acrobot dataset.

It learns from ``acrobot/a2c-half-v0``: about 50,000 transitions (194 episodes) acted by a
partly trained A2C agent with its stochastic policy, so the dataset logs the probability of
every action. The agent swings the tip over the line in 256 steps on average (mean reward
-256.2 on seed 0; an untrained one rarely does within the 500-step limit, a trained one
needs under 100). It is made in two commands (under a minute, see RECIPE): train
Acrobot_A2C for 6,400 env steps, then let that agent act for 52,000 more with its learning
rate at 0, recording what it does.

That agent is still far from sure: in the median logged state its most likely action has
0.48 of the probability (0.64 at the 90th percentile). The batch constraint (actions below
0.3 of the most likely one's probability are ruled out) removes an action in 44% of the
logged states, mostly one the Q-values would not choose anyway, so BCQ learns much as DDQN
would here. The Q-values need about 25 epochs (100 target updates) to carry the reward of
swinging up back through the 250-step episodes; until then the greedy policy tends to
repeat one action and times out (-500). The behaviour model's own most likely action (a
clone of the data) scores between -200 and -500. Off-policy estimates of the policy (OPE/
in TensorBoard) are logged after each epoch, next to the real evaluation.
"""

from coach import PresetValidation
from coach.agents.bcq import DDQNBCQAgentParameters
from coach.networks.heads import CategoricalPolicyHeadParameters
from coach_presets import _batch

DATASET = "acrobot/a2c-half-v0"

RECIPE = _batch.frozen_policy_recipe("Acrobot_A2C", "acrobot_a2c_half", 6400, DATASET)

agent = DDQNBCQAgentParameters()
_batch.q_learning(agent)
agent.algorithm.threshold = 0.3
agent.network_wrappers["imitation"] = _batch.network(
    CategoricalPolicyHeadParameters(name="logits"), target=False
)

graph_manager = _batch.graph(agent, "Acrobot-v1", DATASET, RECIPE, 60)

validation = PresetValidation(min_reward=-100, max_epochs=60, seeds=(0, 1, 2))
