"""Rainbow on CartPole-v1 (Hessel et al., 2018): C51 with double Q-learning, 3-step returns,
prioritized replay, a dueling head and noisy layers (so no epsilon)."""

from coach import (
    BasicRLGraphManager,
    CategoricalQHeadParameters,
    LinearSchedule,
    PresetValidation,
    RainbowAgentParameters,
)
from coach_presets import _cartpole

agent = RainbowAgentParameters()
_cartpole.train_in_rounds(agent)
agent.algorithm.n_step = 3
agent.memory.alpha = 0.5
# Beta reaches 1 (full importance correction) by the end: ~50k sampling calls in 99k steps.
agent.memory.beta_schedule = LinearSchedule(0.4, 1.0, 50_000)
agent.network_wrappers["main"] = _cartpole.network(
    CategoricalQHeadParameters(num_atoms=51, v_min=0.0, v_max=100.0, dueling=True, noisy=True),
    learning_rate=1e-3,
)

graph_manager = BasicRLGraphManager(agent, _cartpole.environment(), _cartpole.schedule())

validation = PresetValidation(min_reward=475, max_env_steps=100_000, seeds=(0, 1, 2))
