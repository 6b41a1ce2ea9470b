"""SAC on Pendulum-v1 (Haarnoja et al., 2018), after RL Zoo: Adam at 1e-3, a gradient step
per env step on batches of 256, the temperature tuned to an entropy of -1, 100 random steps
first. Learning's matrix products run in bfloat16 where the hardware has them (the same
env steps to the threshold, half the time on this project's machine; float32 elsewhere).
Reaches -200 within 20,000 env steps on seeds 0, 1, 2."""

from coach import BasicRLGraphManager
from coach.agents.sac import SACAgentParameters
from coach_presets import _pendulum

agent = SACAgentParameters()
for network in agent.network_wrappers.values():
    network.learning_rate = 1e-3
    network.precision = "auto"  # bfloat16 products where the CPU or GPU has them
agent.algorithm.temperature_learning_rate = 1e-3
_pendulum.act_in_unit_box(agent)

graph_manager = BasicRLGraphManager(agent, _pendulum.environment(), _pendulum.schedule(100))

validation = _pendulum.validation()
