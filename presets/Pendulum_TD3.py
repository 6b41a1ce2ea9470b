"""TD3 on Pendulum-v1 (Fujimoto et al., 2018), after RL Zoo: 10,000 random steps, then at
the end of each 200-step episode 200 gradient steps on batches of 256; discount 0.98,
Gaussian exploration noise of 0.1 (in the [-1, 1] action box), Adam at 1e-3, 400x300
networks, their learning's matrix products in bfloat16 where the hardware has them (the same
env steps to the threshold, half the time on this project's machine; float32 elsewhere).
Reaches -200 within 20,000 env steps on seeds 0, 1, 2."""

from coach import BasicRLGraphManager
from coach.agents.td3 import TD3AgentParameters
from coach_presets import _pendulum

agent = TD3AgentParameters()
_pendulum.train_per_episode(agent)
for network in agent.network_wrappers.values():
    network.precision = "auto"  # bfloat16 products where the CPU or GPU has them

graph_manager = BasicRLGraphManager(agent, _pendulum.environment(), _pendulum.schedule(10_000))

validation = _pendulum.validation()
