"""Goal levels (coach/level_manager.py, `LevelGoals`): the time scales of a three-level
hierarchy of scripted agents, and the sub-episodes a goal level's agent sees."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from coach.agents.acting import Policy
from coach.agents.agent import Agent
from coach.agents.learning import Learner
from coach.agents.parameters import AgentParameters
from coach.core.goals import GoalReward
from coach.core.run_phase import RunPhase
from coach.core.types import ActionInfo, EnvResponse, Observation
from coach.environments.environment import Environment
from coach.level_manager import LevelGoals, LevelManager
from tests.toys import ScriptedPolicy

GOALS = spaces.Box(-1e6, 1e6, (1,), np.float32)


class GoalCounting(Environment):
    """One copy; the state and the achieved goal are the step count; reward 1 per step;
    episodes are truncated after ``length`` steps."""

    def __init__(self, length: int = 1000) -> None:
        self.num_envs = 1
        self.length = length
        box = spaces.Box(0, 1e6, (1,), np.float32)
        self.observation_space = spaces.Dict({"observation": box, "achieved_goal": box})
        self.action_space = spaces.Discrete(2)
        self.t = 0
        self.total_steps = 0

    def _obs(self, t: int) -> dict[str, np.ndarray]:
        value = np.full((1, 1), t, dtype=np.float32)
        return {"observation": value, "achieved_goal": value.copy()}

    def reset(self, seed: int | None = None) -> EnvResponse:
        self.t = 0
        obs = self._obs(0)
        no = np.zeros(1, dtype=bool)
        return EnvResponse(obs, np.zeros(1, np.float32), no, no, obs, np.zeros(1), np.zeros(1))

    def step(self, action: np.ndarray) -> EnvResponse:
        self.t += 1
        self.total_steps += 1
        next_obs = self._obs(self.t)
        truncated = np.array([self.t >= self.length])
        obs = next_obs
        if truncated[0]:
            self.t = 0
            obs = self._obs(0)
        return EnvResponse(
            obs, np.ones(1, np.float32), np.zeros(1, dtype=bool), truncated, next_obs,
            np.full(1, float(self.t)), np.full(1, self.t),
        )  # fmt: skip


class Scripted(Agent):
    """Acts ``offset`` ahead of its current step count (a goal), or a fixed env action."""

    def __init__(self, offset: float | None, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.offset = offset
        self.observed: list[EnvResponse] = []
        self.goals: list[np.ndarray] = []

    def set_goal(self, goal: object) -> None:
        super().set_goal(goal)
        self.goals.append(np.asarray(goal).copy())

    def make_policy(self) -> Policy:
        return ScriptedPolicy(self.choose, **self.policy_arguments())

    def make_learner(self) -> Learner:
        return Learner(**self.learner_arguments())  # a scripted agent learns nothing

    def choose(self, state: Observation) -> ActionInfo:
        if self.offset is None:
            return ActionInfo(np.zeros(1, dtype=np.int64))
        return ActionInfo((state["observation"] + self.offset).astype(np.float32))

    def observe(self, response: EnvResponse) -> None:
        self.observed.append(response)
        super().observe(response)


def _agent(offset: float | None, observation: spaces.Dict, action: spaces.Space) -> Scripted:
    agent = Scripted(offset, AgentParameters(), observation, action, 1, seed=0)
    agent.phase = RunPhase.TRAIN
    return agent


def _hierarchy(
    middle_offset: float, top_offset: float = 1e5
) -> tuple[GoalCounting, LevelManager, Scripted, Scripted, Scripted]:
    env = GoalCounting()
    goals = LevelGoals(goal_reward=GoalReward(threshold=0.0))
    bottom_agent = _agent(None, goals.agent_space(env.observation_space, GOALS), env.action_space)
    bottom = LevelManager("bottom", bottom_agent, env, 4, GOALS, goals)
    middle_agent = _agent(middle_offset, goals.agent_space(bottom.observation_space, GOALS), GOALS)
    middle = LevelManager("middle", middle_agent, bottom, 3, GOALS, goals)
    top_agent = _agent(top_offset, middle.observation_space, GOALS)
    top = LevelManager("top", top_agent, middle)
    top.reset(seed=0)
    return env, top, top_agent, middle_agent, bottom_agent


def test_each_level_runs_at_most_its_horizon_per_action_from_above() -> None:
    # Goals never reached (far ahead): every sub-episode runs its whole horizon.
    env, top, top_agent, middle_agent, bottom_agent = _hierarchy(middle_offset=1e5)
    for _ in range(5):
        top.step()
    assert len(middle_agent.goals) == 5  # one middle sub-episode per top action
    assert len(bottom_agent.goals) == 5 * 3  # 3 bottom sub-episodes per middle goal
    assert env.total_steps == 5 * 3 * 4  # 4 env steps per bottom goal
    # The top level stores exactly one transition per middle sub-episode, the middle one
    # per bottom sub-episode, the bottom one per env step.
    assert len(top_agent.observed) == 5
    assert len(middle_agent.observed) == 15
    assert len(bottom_agent.observed) == 60
    # The top level gets the env's rewards summed over the steps below; the goal levels
    # get their goal rewards (not reached: -1).
    assert [float(r.reward[0]) for r in top_agent.observed] == [12.0] * 5
    assert [float(r.reward[0]) for r in middle_agent.observed[:3]] == [-1.0, -1.0, -1.0]


def test_a_sub_episode_ends_when_its_horizon_is_spent_truncated() -> None:
    _, top, _, middle_agent, bottom_agent = _hierarchy(middle_offset=1e5)
    top.step()
    flags = [(bool(r.terminated[0]), bool(r.truncated[0])) for r in bottom_agent.observed[:4]]
    assert flags == [(False, False)] * 3 + [(False, True)]
    assert [bool(r.episode_started[0]) for r in bottom_agent.observed[:4]] == [False] * 3 + [True]
    # The bottom agent sees its goal; its reward is the goal reward, not the env's.
    np.testing.assert_array_equal(
        bottom_agent.observed[0].next_observation["desired_goal"], bottom_agent.goals[0]
    )
    assert {float(r.reward[0]) for r in bottom_agent.observed} == {-1.0}
    assert middle_agent.observed[2].truncated[0] and not middle_agent.observed[1].truncated[0]


def test_a_reached_goal_ends_the_sub_episode_early_and_terminated() -> None:
    # The middle level asks for 2 steps ahead: the bottom level gets there in 2 of its 4.
    env, top, top_agent, _, bottom_agent = _hierarchy(middle_offset=2.0)
    top.step()
    assert len(bottom_agent.goals) == 3 and env.total_steps == 3 * 2
    firsts = bottom_agent.observed[:2]
    assert [bool(r.terminated[0]) for r in firsts] == [False, True]
    assert [float(r.reward[0]) for r in firsts] == [-1.0, 0.0]
    assert firsts[1].infos == [{"is_success": 1.0}]
    # Each new sub-episode starts from where the last one ended, with the new goal.
    assert [float(g[0, 0]) for g in bottom_agent.goals] == [2.0, 4.0, 6.0]
    assert len(top_agent.observed) == 1
