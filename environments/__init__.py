"""Environments shipped with Coach, registered with gymnasium on import.

This folder installs as the package ``coach_environments`` (a top-level ``environments``
would shadow a user's own module of that name); import it by that name only, so that it is
never imported twice under two names.

- ``coach/BitFlip-v0``: `BitFlipEnv`, the bit-flipping task of Hindsight Experience Replay
  (Andrychowicz et al., 2017); goal-based.
- ``coach/ExplorationChain-v0``: `ExplorationChainEnv`, the chain of Bootstrapped DQN
  (Osband et al., 2016) that rewards deep exploration.
- ``coach/PendulumWithGoals-v0``: `PendulumWithGoalsEnv`, the goal-based pendulum swing-up of
  Coach's HAC preset (Levy et al., 2019) on gymnasium's Pendulum dynamics; goal-based.

The goal-based ones follow gymnasium-robotics' convention (dict observations with
``observation``, ``achieved_goal`` and ``desired_goal``, a vectorised ``compute_reward`` and
``info["is_success"]``). Each truncates its own episodes, so the registrations add no
``TimeLimit``. Constructor arguments pass through ``gymnasium.make``::

    import coach_environments  # registers the ids
    env = gymnasium.make("coach/BitFlip-v0", n_bits=10)

(``gymnasium.make("coach_environments:coach/BitFlip-v0")`` imports this package itself.)
"""

from __future__ import annotations

import gymnasium

from coach_environments.bit_flip import BitFlipEnv
from coach_environments.exploration_chain import ChainObservation, ExplorationChainEnv
from coach_environments.pendulum_with_goals import PendulumWithGoalsEnv

ENVIRONMENT_IDS = {
    "coach/BitFlip-v0": "coach_environments.bit_flip:BitFlipEnv",
    "coach/ExplorationChain-v0": "coach_environments.exploration_chain:ExplorationChainEnv",
    "coach/PendulumWithGoals-v0": "coach_environments.pendulum_with_goals:PendulumWithGoalsEnv",
}
"""The gymnasium id of each environment and its entry point."""

for _env_id, _entry_point in ENVIRONMENT_IDS.items():
    # A second import (a reload, or the package imported under two names) must not register
    # again: gymnasium warns about overriding an existing id.
    if _env_id not in gymnasium.registry:
        gymnasium.register(id=_env_id, entry_point=_entry_point)

__all__ = [
    "ENVIRONMENT_IDS",
    "BitFlipEnv",
    "ChainObservation",
    "ExplorationChainEnv",
    "PendulumWithGoalsEnv",
]
