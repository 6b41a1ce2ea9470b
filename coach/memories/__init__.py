"""Memories: where agents keep their experience."""

from coach.core.goals import GoalReward
from coach.memories.advantages import generalized_advantages
from coach.memories.experience_replay import ExperienceReplay, ExperienceReplayParameters
from coach.memories.hierarchical_hindsight import (
    HierarchicalHindsightExperienceReplay,
    HierarchicalHindsightExperienceReplayParameters,
)
from coach.memories.hindsight import (
    EpisodicHindsightExperienceReplay,
    EpisodicHindsightExperienceReplayParameters,
)
from coach.memories.memory import Memory
from coach.memories.n_step import NStepAccumulator
from coach.memories.prioritized_experience_replay import (
    PrioritizedExperienceReplay,
    PrioritizedExperienceReplayParameters,
)
from coach.memories.rollout import Rollout, RolloutParameters
from coach.memories.sequence_replay import SequenceReplay, SequenceReplayParameters

__all__ = [
    "EpisodicHindsightExperienceReplay",
    "EpisodicHindsightExperienceReplayParameters",
    "ExperienceReplay",
    "ExperienceReplayParameters",
    "GoalReward",
    "HierarchicalHindsightExperienceReplay",
    "HierarchicalHindsightExperienceReplayParameters",
    "Memory",
    "NStepAccumulator",
    "PrioritizedExperienceReplay",
    "PrioritizedExperienceReplayParameters",
    "Rollout",
    "RolloutParameters",
    "SequenceReplay",
    "SequenceReplayParameters",
    "generalized_advantages",
]
