"""Memories: where agents keep their experience."""

from coach.memories.experience_replay import ExperienceReplay, ExperienceReplayParameters
from coach.memories.memory import Memory

__all__ = ["ExperienceReplay", "ExperienceReplayParameters", "Memory"]
