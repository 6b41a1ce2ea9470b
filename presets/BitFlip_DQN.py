"""DQN on 20-bit BitFlip without hindsight replay: the baseline of BitFlip_DQN_HER, with the
same agent, network and budget. A reward of -1 until every bit matches is too sparse for
random exploration to find (Andrychowicz et al., 2017): it stays below 10% success."""

from coach import BasicRLGraphManager, PresetValidation
from coach_presets import _bit_flip

agent = _bit_flip.agent()
agent.memory.max_size = 1_000_000

graph_manager = BasicRLGraphManager(agent, _bit_flip.environment(), _bit_flip.schedule())

validation = PresetValidation(max_success_rate=0.1, max_env_steps=_bit_flip.BUDGET)
