"""The adapter of PettingZoo's parallel API: every id in play acts at every step.

Each step closes the action of every id that acted: its reward, next observation and flags.
An id that terminates or is truncated leaves its copy's episode; the others go on, and when
none is left in play the copy's episode is over and it resets in the same step (SAME_STEP),
its first decisions in the response.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from coach.environments.multi_agent import MultiAgentResponse
from coach.environments.multi_agent_draft import ResponseDraft
from coach.environments.pettingzoo_base import PettingZooEnvironment
from coach.errors import CoachError


class ParallelPettingZooEnvironment(PettingZooEnvironment):
    """``num_envs`` copies of a PettingZoo ``ParallelEnv`` behind `MultiAgentEnvironment`.

    Args:
        make_env: Makes one copy, a ``pettingzoo.ParallelEnv``.
        num_envs: How many copies step together.
        observation_key: The key a non-dict observation gets in an id's ``spaces.Dict``.
    """

    turn_based = False

    def _reset_infos(self, env: Any) -> dict[str, Any]:
        _, infos = env.reset()
        return dict(infos)

    def _start(self, draft: ResponseDraft, copy: int, seed: int | None) -> None:
        env = self.envs[copy]
        observations, infos = env.reset(seed=seed)
        deciding = list(env.agents)
        if not deciding:
            raise CoachError(f"{env} has no agent in play after a reset")
        agents = draft.agents
        for agent_id in deciding:
            agents[agent_id].act(copy, observations[agent_id], infos.get(agent_id), True)
        self._deciding[copy] = deciding
        draft.infos[copy] = infos

    def step(self, actions: dict[str, np.ndarray]) -> MultiAgentResponse:
        draft = self._draft()
        agents = draft.agents
        returns, lengths, copied = self._returns, self._lengths, self._copied_actions
        for copy, env in enumerate(self.envs):
            deciding = self._deciding[copy]
            joint = {}
            for agent_id in deciding:
                action = actions[agent_id][copy]
                joint[agent_id] = action.copy() if copied[agent_id] else action
            observations, rewards, terminations, truncations, infos = env.step(joint)
            team = 0.0
            for agent_id, reward in rewards.items():  # an id may be rewarded without acting
                value = float(reward)  # a float32 reward would keep the sums in float32
                team += value
                returns[agent_id][copy] += value
            self._copy_returns[copy] += team
            self._copy_lengths[copy] += 1
            in_play = [i for i in env.agents if not (terminations.get(i) or truncations.get(i))]
            for agent_id in deciding:
                lengths[agent_id][copy] += 1
                agents[agent_id].close(
                    copy,
                    rewards.get(agent_id, 0.0),
                    bool(terminations.get(agent_id, False)),
                    bool(truncations.get(agent_id, False)),
                    None
                    if agent_id in in_play  # it decides next on the observation
                    else (observations.get(agent_id), infos.get(agent_id)),
                )
            draft.infos[copy] = infos
            if in_play:
                for agent_id in in_play:
                    # An id in play that did not decide before joined the episode now.
                    started = agent_id not in deciding
                    agents[agent_id].act(copy, observations[agent_id], infos.get(agent_id), started)
                self._deciding[copy] = in_play
            else:  # no id left in play: the copy's episode is over
                self._end_copy(draft, copy)
                self._start(draft, copy, None)
                draft.infos[copy] = infos  # the ended step's, as gymnasium's autoreset
        self.total_steps += self.num_envs
        return self._respond(draft)
