"""Behavioral cloning of continuous actions on a fixed Pendulum dataset: a regression of the
logged torques.

It learns from ``pendulum/sac-expert-v0``: 100 evaluation episodes (20,000 transitions) of
a trained SAC agent (Pendulum_SAC) acting with its deterministic policy, an expert whose
episodes average -162.4 on seed 0. It is made in two commands (a few minutes, see RECIPE):
train Pendulum_SAC, then evaluate its final checkpoint over 100 episodes, recording them.
The clone regresses the torques the expert chose (a squared error, through a tanh head
inside [-2, 2]) and acts with them: on expert data, cloning is the right tool.
"""

from coach import PresetValidation
from coach.agents.bc import BCAgentParameters
from coach.networks.heads import DeterministicPolicyHeadParameters
from coach_presets import _batch

DATASET = "pendulum/sac-expert-v0"

RECIPE = """\
    coach -p Pendulum_SAC -e pendulum_sac
    coach -p Pendulum_SAC -crd experiments/pendulum_sac --evaluate 100 \\
        --record-dataset pendulum/sac-expert-v0"""

agent = BCAgentParameters()
agent.algorithm.batch_size = 128
agent.network_wrappers["main"] = _batch.network(
    DeterministicPolicyHeadParameters(name="policy"), target=False
)

graph_manager = _batch.graph(agent, "Pendulum-v1", DATASET, RECIPE, 30)

validation = PresetValidation(min_reward=-200, max_epochs=30, seeds=(0, 1, 2))
"""Pendulum_SAC's own bar: the expert's level, within the noise of 10 episodes."""
