"""Environments shipped with Coach, registered with gymnasium on import.

The goal-based and exploration environments (BitFlip, ExplorationChain, PendulumWithGoals)
come with the filters-and-environments work; this package is where they live.
"""
