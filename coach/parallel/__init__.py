"""Rollout workers and the learner that drives them: local processes (the default) or Ray."""
