"""Episode boundaries are data: an environment that hands out fresh copies of its
observations, and one that overwrites a single buffer in place every step, give the same run
as the plain environment, number for number (DQN, Clipped PPO, SAC and a HAC hierarchy).

Before the flags, Coach read an episode end from ``next_observation is not observation``:
the copying environment then looked as if every step ended an episode, and the buffer one
changed the agent's stored states under its feet.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np
import pytest
import torch

from coach.core.types import EnvResponse, Observation
from coach.environments.environment import Environment
from coach.environments.parameters import GymEnvironmentParameters
from coach.graph_managers.parameters import RunContext
from coach.parameters import set_parameter
from coach.presets import load_preset


class _Delegating(Environment):
    """Everything but the responses is the wrapped environment's."""

    def __init__(self, inner: Environment) -> None:
        self.inner = inner
        self.observation_space = inner.observation_space
        self.action_space = inner.action_space
        self.num_envs = inner.num_envs

    @property  # type: ignore[override]
    def total_steps(self) -> int:
        return self.inner.total_steps

    @property  # type: ignore[override]
    def total_episodes(self) -> int:
        return self.inner.total_episodes

    def reset(self, seed: int | None = None) -> EnvResponse:
        return self.wrap(self.inner.reset(seed))

    def step(self, action: Any) -> EnvResponse:
        return self.wrap(self.inner.step(action))

    def wrap(self, response: EnvResponse) -> EnvResponse:
        raise NotImplementedError

    def close(self) -> None:
        self.inner.close()


class CopyingEnvironment(_Delegating):
    """Every response holds fresh copies: ``observation`` and ``next_observation`` are never
    one object, also where no episode ended."""

    def wrap(self, response: EnvResponse) -> EnvResponse:
        return dataclasses.replace(
            response,
            observation={k: v.copy() for k, v in response.observation.items()},
            next_observation={k: v.copy() for k, v in response.next_observation.items()},
            episode_started=response.episode_started.copy(),
        )


class ReusedBufferEnvironment(_Delegating):
    """Two dictionaries of arrays, allocated once and overwritten in place by every step:
    whatever keeps a response's arrays without copying them sees them change."""

    def __init__(self, inner: Environment) -> None:
        super().__init__(inner)
        self.observation: Observation | None = None
        self.next_observation: Observation | None = None

    def _into(self, buffer: Observation | None, values: Observation) -> Observation:
        if buffer is None:
            return {k: np.array(v) for k, v in values.items()}
        for key, value in values.items():
            np.copyto(buffer[key], value)
        return buffer

    def wrap(self, response: EnvResponse) -> EnvResponse:
        self.observation = self._into(self.observation, response.observation)
        self.next_observation = self._into(self.next_observation, response.next_observation)
        return dataclasses.replace(
            response, observation=self.observation, next_observation=self.next_observation
        )


WRAPPERS = {"copying": CopyingEnvironment, "reused_buffer": ReusedBufferEnvironment}


@dataclasses.dataclass(slots=True, kw_only=True)
class _WrappedParameters(GymEnvironmentParameters):
    wrapper: str = "copying"

    def build(self) -> Environment:
        return WRAPPERS[self.wrapper](GymEnvironmentParameters.build(self))


CASES = {
    "CartPole_DQN": {
        "schedule.heatup_steps": "EnvironmentSteps(200)",
        "schedule.improve_steps": "EnvironmentSteps(600)",
        "agent.algorithm.num_steps_between_copying_online_weights_to_target": (
            "EnvironmentSteps(100)"
        ),
    },
    "CartPole_ClippedPPO": {
        "schedule.heatup_steps": "EnvironmentSteps(0)",
        "schedule.improve_steps": "EnvironmentSteps(600)",
    },
    "Pendulum_SAC": {
        "schedule.heatup_steps": "EnvironmentSteps(200)",
        "schedule.improve_steps": "EnvironmentSteps(150)",
        "agent.algorithm.batch_size": "32",
    },
    "Pendulum_HAC": {
        "schedule.heatup_steps": "EnvironmentSteps(300)",
        "schedule.improve_steps": "EnvironmentSteps(300)",
    },
}


@functools.cache
def _run(name: str, wrapper: str | None) -> tuple[list[list[float]], list[np.ndarray], list[int]]:
    """The evaluation rewards, every network's weights and the memories' sizes of a short run
    of preset ``name`` on its environment, wrapped by ``wrapper`` (or plain)."""
    graph = load_preset(name).graph_manager
    roots = graph.parameters()
    overrides = {
        **CASES[name],
        "schedule.steps_between_evaluation_periods": "EnvironmentSteps(300)",
        "schedule.evaluation_steps": "EnvironmentEpisodes(1)",
    }
    for path, value in overrides.items():
        set_parameter(roots, path, value)
    if wrapper is not None:
        plain = graph.env_params
        values = {f.name: getattr(plain, f.name) for f in dataclasses.fields(plain)}
        graph.env_params = _WrappedParameters(**values, wrapper=wrapper)
    graph.create_graph(RunContext(seed=3))
    try:
        graph.improve()
    finally:
        graph.close()
    agents = [level.agent for level in graph.levels]
    weights = [
        torch.cat([p.detach().flatten() for p in net.online.parameters()]).numpy()
        for agent in agents
        for net in agent.networks.values()
    ]
    sizes = [len(agent.memory) if agent.memory is not None else 0 for agent in agents]
    assert all(agent.training_steps > 0 for agent in agents), "the run must train"
    return [e.rewards for e in graph.evaluations], weights, sizes


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_run_does_not_depend_on_which_arrays_the_environment_returns(
    name: str, wrapper: str
) -> None:
    rewards, weights, sizes = _run(name, None)
    wrapped_rewards, wrapped_weights, wrapped_sizes = _run(name, wrapper)
    assert wrapped_rewards == rewards
    assert wrapped_sizes == sizes
    for ours, theirs in zip(wrapped_weights, weights, strict=True):
        np.testing.assert_array_equal(ours, theirs)
