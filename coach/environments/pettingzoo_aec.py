"""The adapter of PettingZoo's AEC API: the ids take turns, one decision per copy and step.

After the selected id's move, the copy advances to its next decision. While the selected id
is done (terminated or truncated) its outcome is read from ``env.last()`` (the rewards it
collected since its last action, its final observation, its flags) and it is stepped with
``None``, which removes it. When an id in play is selected, the outcome of its last action
this episode (if it took one) is read the same way, and it decides next on ``last()``'s
observation. When no id is left the copy's episode is over: it resets in the same step
(SAME_STEP) and advances to its first decision. So after every call each copy has exactly
one deciding id.

An id collects rewards while the others move (PettingZoo's ``last()`` sums them): they are
the outcome of its last action, reported when its turn comes again or its episode ends.
Rewards count to the id's return, and its copy's, when they are read that way: the returns
of an episode in flight lag behind its moves, those of a finished episode hold every reward.
Rewards an id gets before its first move of an episode count to its return, with no outcome.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from coach.environments.multi_agent import MultiAgentResponse
from coach.environments.multi_agent_draft import ResponseDraft
from coach.environments.pettingzoo_base import PettingZooEnvironment
from coach.errors import CoachError


class AECPettingZooEnvironment(PettingZooEnvironment):
    """``num_envs`` copies of a PettingZoo ``AECEnv`` behind `MultiAgentEnvironment`.

    Args:
        make_env: Makes one copy, a ``pettingzoo.AECEnv``.
        num_envs: How many copies step together.
        observation_key: The key a non-dict observation gets in an id's ``spaces.Dict``.
    """

    turn_based = True

    def _reset_infos(self, env: Any) -> dict[str, Any]:
        env.reset()
        return dict(env.infos)

    def _start(self, draft: ResponseDraft, copy: int, seed: int | None) -> None:
        self.envs[copy].reset(seed=seed)
        self._advance(draft, copy, started=True)

    def step(self, actions: dict[str, np.ndarray]) -> MultiAgentResponse:
        draft = self._draft()
        for copy, env in enumerate(self.envs):
            (agent_id,) = self._deciding[copy]
            env.step(self._action(actions, agent_id, copy))
            self._lengths[agent_id][copy] += 1
            self._copy_lengths[copy] += 1
            self._acted[copy].add(agent_id)
            self._advance(draft, copy)
        self.total_steps += self.num_envs
        return self._respond(draft)

    def _advance(self, draft: ResponseDraft, copy: int, started: bool = False) -> None:
        """Step copy ``copy`` on to its next decision, drafting the outcomes on the way.

        Args:
            draft: The call's response.
            copy: The copy.
            started: The copy was reset just before: its episode must reach a decision.
        """
        env = self.envs[copy]
        while env.agents:
            agent_id = env.agent_selection
            observation, reward, terminated, truncated, info = env.last()
            reward = float(reward)
            self._returns[agent_id][copy] += reward
            self._copy_returns[copy] += reward
            draft.infos[copy][agent_id] = info
            acted = agent_id in self._acted[copy]
            agent = draft.agents[agent_id]
            if terminated or truncated:
                if acted:
                    final = (observation, info)
                    agent.close(copy, reward, bool(terminated), bool(truncated), final)
                env.step(None)  # the done id leaves
                continue
            if acted:
                agent.close(copy, reward, False, False)  # it decides next on this observation
            agent.act(copy, observation, info, started=not acted)
            self._deciding[copy] = [agent_id]
            return
        if started:
            raise CoachError(f"{env}'s episode ended after a reset before any agent decided")
        self._end_copy(draft, copy)
        self._start(draft, copy, None)
