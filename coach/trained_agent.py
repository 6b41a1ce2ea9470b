"""A trained agent, loaded from its run's folder, acting from Python: `load_agent`.

    agent = coach.load_agent("experiments/CartPole_DQN")   # its newest run, or a run folder
    action = agent.act(observation)                        # the greedy action, as it evaluates

The run's agent is rebuilt and restored from its checkpoint as ``coach export`` and
``coach --evaluate -crd`` restore it (`coach.export.files.restore_level`): from the
``params.yaml`` beside the checkpoint, acting only (no memory, optimizers or target
networks) where its graph builds it so. `TrainedAgent.act` takes what the environment gives,
one observation or a batch, runs it through the agent's input filters as the run did (their
statistics frozen at the checkpoint's), and answers the environment's action, through the
output filters: what ``coach --evaluate`` would send to the environment for it.

What an agent keeps from step to step (a recurrent network's hidden state, a stack of the
last frames) is kept per environment copy, as in the run: each row of a batch is a copy, and
its episode starts on the first observation it is given, after `TrainedAgent.reset`, or where
``episode_start`` says so.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
from gymnasium import spaces

from coach.core.run_phase import EVALUATE, TRAIN
from coach.core.types import ActionInfo
from coach.errors import CoachError
from coach.trust import AllowedImports


class TrainedAgent:
    """A run's agent restored from a checkpoint, acting on observations given to it.

    Made by `load_agent`. Close it when done (or use it in a ``with`` block): it holds the
    run's environment, built to check that the parameters still build it.

    Args:
        level: The run's level, its agent restored (`coach.export.files.restore_level`).
        checkpoint: The checkpoint file it was restored from.
    """

    def __init__(self, level: Any, checkpoint: Path) -> None:
        from coach.level_manager import LevelManager

        if not isinstance(level, LevelManager):
            level.close()
            raise CoachError(
                f"the run's level is multi-agent (agents {', '.join(level.agents)}): only one "
                f"agent acting alone in its environment can be loaded to act"
            )
        self._level = level
        self.agent = level.agent
        """The Coach agent itself (`coach.agents.agent.Agent`)."""
        self.checkpoint = checkpoint
        """The checkpoint file the agent was restored from."""
        environment = level.environment
        self.observation_space: spaces.Dict = environment.observation_space
        """What the agent reads: the run's environment's observation space, a dict of keys
        (``observation`` for an environment of a single array)."""
        self.action_space: spaces.Space[Any] = environment.action_space
        """What `act` answers in: the environment's action space."""
        self.num_envs: int = self.agent.num_envs
        """How many environment copies it acts in at once, as in the run: a batch of
        observations has at most this many rows, one per copy, where the agent keeps
        something per copy (`per_copy`)."""
        self.per_copy = bool(self.agent.policy.recurrent) or any(
            f.per_copy_state
            for fs in self.agent.input_filter.observation_filters.values()
            for f in fs
        )
        """Whether the agent keeps something from one step to the next per copy: a hidden
        state, a stack of frames. Without, a batch of any size is acted on at once."""
        self._starting = np.ones(self.num_envs, dtype=bool)
        self._reset_state()

    # -- acting -------------------------------------------------------------------------------

    def act(
        self,
        observation: Any,
        episode_start: bool | np.ndarray | None = None,
        explore: bool = False,
    ) -> np.ndarray | np.generic:
        """The action for ``observation``: one observation (an array, or a dict of them by
        key) gets one action, a batch (a leading axis of rows) a batch of actions.

        Args:
            observation: What the environment gave, before any of the agent's filters.
            episode_start: Whether the observation (or each row of a batch) begins an
                episode: where it does, what the agent keeps per copy starts over. The first
                observation given after `load_agent` or `reset` begins one anyway.
            explore: Act as in training (e-greedy, sampled, with noise) instead of as the
                run evaluates (greedy, or the policy's mode).

        Returns:
            The environment's action (after the agent's output filters): an integer for a
            discrete space, an array for a continuous one; a batch of them for a batch.

        Raises:
            CoachError: the observation does not fit the agent's observation space, or a
                batch has more rows than the agent has copies where it keeps something per
                copy.
        """
        batch, single = self._as_batch(observation)
        rows = len(next(iter(batch.values())))
        agent = self.agent
        agent.phase = TRAIN if explore else EVALUATE
        if rows > self.num_envs:
            if self.per_copy or explore:
                raise CoachError(
                    f"a batch of {rows} observations, but this agent acts in {self.num_envs} "
                    f"environment copies, keeping {self._kept()} for each: give at most "
                    f"{self.num_envs} rows at a time"
                )
            # Nothing kept per copy: the whole batch at once, as an evaluation of that many.
            agent.state = agent.input_filter.filter_observation(batch, False)
            info = agent.act()
            self._reset_state()
            return _answer(info, single)
        copies = np.arange(rows)
        starting = self._starting[:rows].copy()
        if episode_start is not None:
            starting |= np.broadcast_to(np.asarray(episode_start, dtype=bool), (rows,))
        started, going = copies[starting], copies[~starting]
        if len(started):
            agent.begin({key: value[started] for key, value in batch.items()}, started)
        if len(going):
            moved_on = agent.input_filter.filter_observation(
                {key: value[going] for key, value in batch.items()}, False, going
            )
            for key, value in moved_on.items():
                agent.state[key][going] = value
        self._starting[:rows] = False
        return _answer(agent.act(copies), single)

    def reset(self) -> None:
        """The next observation of every copy begins an episode."""
        self._starting[:] = True

    def _kept(self) -> str:
        return "a hidden state" if self.agent.policy.recurrent else "a history of observations"

    def _reset_state(self) -> None:
        self.agent.state = {
            key: np.zeros((self.num_envs, *(space.shape or ())), dtype=space.dtype)
            for key, space in self.agent.observation_space.spaces.items()
        }
        self._starting[:] = True

    def _as_batch(self, observation: Any) -> tuple[dict[str, np.ndarray], bool]:
        """``observation`` as a batch by key, and whether it was a single observation."""
        keys = list(self.observation_space.spaces)
        if not isinstance(observation, dict):
            if len(keys) != 1:
                raise CoachError(
                    f"the agent reads the observation keys {keys}: give a dict of them"
                )
            observation = {keys[0]: observation}
        missing = [key for key in keys if key not in observation]
        if missing:
            raise CoachError(
                f"the observation has keys {sorted(observation)}, the agent reads {keys}: "
                f"{missing} missing"
            )
        singles = set()
        batch = {}
        for key in keys:
            space = self.observation_space[key]
            value = np.asarray(observation[key], dtype=space.dtype)
            shape = tuple(space.shape or ())
            if value.shape == shape:
                singles.add(True)
                value = value[None]
            elif value.shape[1:] == shape and value.ndim == len(shape) + 1:
                singles.add(False)
            else:
                raise CoachError(
                    f"observation {key!r} has shape {value.shape}; the agent reads {shape}, "
                    f"or a batch of them {('N', *shape)}"
                )
            batch[key] = value
        if len(singles) > 1 or len({len(v) for v in batch.values()}) > 1:
            raise CoachError("the observation's keys hold different numbers of rows")
        return batch, singles.pop()

    # -- closing ------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the run's environment the agent was built with."""
        self._level.close()

    def __enter__(self) -> TrainedAgent:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def _answer(info: ActionInfo, single: bool) -> np.ndarray | np.generic:
    """The environment's actions of ``info`` (`Agent.act` sets them); the one action of a
    single observation."""
    action = info.env_action
    assert action is not None, "Agent.act answers in the environment's actions"
    return action[0] if single else action


def load_agent(
    source: str | Path,
    preset: str | None = None,
    allow_import: tuple[str, ...] = (),
) -> TrainedAgent:
    """The agent of a run, restored from its checkpoint, to act from Python.

    Args:
        source: What ``coach -crd`` takes: a run's folder (its latest checkpoint), its
            ``checkpoints`` folder, a checkpoint file (``checkpoints/best.pt``: the run at its
            best evaluation), or ``experiments/NAME`` for its newest run.
        preset: The preset the run was made from, where its ``params.yaml`` names a preset
            file that is not found by name (a file of one's own); ``params.yaml``'s
            parameters are applied over it.
        allow_import: The modules and preset files ``params.yaml`` may name for this load,
            as ``--allow-import`` gives them (`coach.trust`).

    Raises:
        CoachError: no checkpoint there, no ``params.yaml`` beside it, parameters that do not
            build the run's agent, a hierarchy or a multi-agent level (one agent acting alone
            in its environment is loaded).
    """
    from coach.checkpoints import find_checkpoint
    from coach.export.files import restore_level

    path = Path(source)
    checkpoint = find_checkpoint(path)
    level = restore_level(path, preset, AllowedImports(tuple(allow_import)))
    return TrainedAgent(level, checkpoint)
