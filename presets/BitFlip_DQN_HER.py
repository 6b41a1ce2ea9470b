"""DQN with hindsight experience replay on 20-bit BitFlip (Andrychowicz et al., 2017): each
finished episode is stored with 4 relabeled copies of every step, their goals the states
reached later in the episode ("future"). Its twin without hindsight replay is BitFlip_DQN."""

from coach import BasicRLGraphManager, PresetValidation
from coach.core.goals import GoalReward
from coach.memories.hindsight import EpisodicHindsightExperienceReplayParameters
from coach_presets import _bit_flip

agent = _bit_flip.agent()
agent.memory = EpisodicHindsightExperienceReplayParameters(
    max_size=1_000_000,
    hindsight_goal_selection_method="future",
    hindsight_transitions_per_regular_transition=4,
    goal_reward=GoalReward(threshold=0.0, reached_reward=0.0, not_reached_reward=-1.0),
)

graph_manager = BasicRLGraphManager(agent, _bit_flip.environment(), _bit_flip.schedule())

validation = PresetValidation(min_success_rate=0.9, max_env_steps=_bit_flip.BUDGET)
