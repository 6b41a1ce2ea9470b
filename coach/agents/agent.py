"""The agent base: observe, act, train, handle_episode_ended.

An agent sees its environment only through what its level manager hands it: it acts on its
current (filtered) state, observes the environment's batched response, stores what it learns
from, and trains when its own schedule says so. The algorithm lives in two hooks a subclass
writes, `choose_action` and `learn_from_batch`; everything else here is bookkeeping shared by
every algorithm.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from coach import validation as check
from coach.agents.log import AgentLog, NullLog
from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentSteps
from coach.core.types import ActionInfo, Batch, EnvResponse, Observation
from coach.errors import CoachError
from coach.exploration.exploration_policy import random_actions
from coach.filters.pipeline import InputFilter, OutputFilter
from coach.memories.experience_replay import ReplayParameters
from coach.networks.network_wrapper import NetworkWrapper
from coach.networks.parameters import NetworkParameters
from coach.validation import InvalidParameter

RANDOM_BLOCK = 1024
"""Steps of random actions drawn at once in heatup."""


@dataclass(slots=True, kw_only=True)
class AlgorithmParameters:
    """What every algorithm has: a discount and a rhythm of playing and training."""

    discount: float = 0.99
    """Discount factor of future rewards."""
    num_consecutive_playing_steps: EnvironmentSteps = field(
        default_factory=lambda: EnvironmentSteps(1)
    )
    """Env steps (summed over copies) between two training rounds."""
    num_consecutive_training_steps: int = 1
    """Gradient steps in one training round."""
    batch_size: int = 32
    """Transitions per gradient step."""

    def validate(self) -> None:
        validate_rhythm(self)
        check.whole("batch_size", self.batch_size, 1)


def validate_rhythm(params: AlgorithmParameters) -> None:
    """The checks every algorithm shares: the discount, and the rhythm of playing and
    training (an on-policy batch size follows rules of its own)."""
    check.number("discount", params.discount, 0, 1)
    check.steps(
        "num_consecutive_playing_steps",
        params.num_consecutive_playing_steps,
        (EnvironmentSteps,),
        1,
    )
    check.whole("num_consecutive_training_steps", params.num_consecutive_training_steps, 1)


@dataclass(slots=True, kw_only=True)
class AgentParameters:
    """An agent: its algorithm, exploration, memory, networks and filters."""

    algorithm: AlgorithmParameters = field(default_factory=AlgorithmParameters)
    """The algorithm's parameters."""
    exploration: Any = None
    """Exploration parameters (built with the action space and the agent's generator)."""
    memory: Any = None
    """Memory parameters (built with the spaces and the agent's generator)."""
    network_wrappers: dict[str, NetworkParameters] = field(default_factory=dict)
    """The agent's networks by name; each has its own optimizer and loss."""
    input_filter: InputFilter = field(default_factory=InputFilter)
    """What observations and rewards go through before the agent sees them."""
    output_filter: OutputFilter = field(default_factory=OutputFilter)
    """What actions go through on their way to the environment."""
    name: str = "agent"
    """The agent's name in logs and TensorBoard runs."""

    def validate(self) -> None:
        check.component("exploration", self.exploration, "EGreedyParameters()")
        check.component("memory", self.memory, "ExperienceReplayParameters()")
        check.file_name("name", self.name)  # it names the agent's TensorBoard run folder
        batch_size = self.algorithm.batch_size
        if isinstance(self.memory, ReplayParameters) and self.memory.max_size < batch_size:
            raise InvalidParameter(
                "memory.max_size",
                f"must be >= algorithm.batch_size ({batch_size})",
                self.memory.max_size,
            )

    def validate_for_environment(self, num_envs: int) -> None:
        """Check these parameters against the ``num_envs`` environment copies whose steps the
        agent learns from together."""

    def agent_class(self) -> type[Agent]:
        """The agent these parameters build."""
        raise NotImplementedError(f"{type(self).__name__} does not name its agent class")


class Agent:
    """The shared part of every agent.

    Args:
        params: The agent's parameters.
        observation_space: The environment's observation space (before the input filter).
        action_space: The environment's action space (after the output filter).
        num_envs: How many environment copies the agent acts in at once.
        seed: Seeds the agent's numpy and torch generators.
        device: Torch device of the networks.
        log: Where the agent reports episodes and scalars.
    """

    def __init__(
        self,
        params: AgentParameters,
        observation_space: spaces.Dict,
        action_space: spaces.Space,
        num_envs: int,
        seed: int,
        device: str | torch.device = "cpu",
        log: AgentLog | None = None,
    ) -> None:
        self.params = params
        self.name = params.name
        self.num_envs = num_envs
        self.rng = np.random.default_rng(seed)
        self.torch_generator = torch.Generator().manual_seed(seed)
        self.device = torch.device(device)
        self.log: AgentLog = log or NullLog()
        self.input_filter = copy.deepcopy(params.input_filter)
        self.output_filter = copy.deepcopy(params.output_filter)
        self.observation_space = self.input_filter.bind(observation_space)
        self.action_space = self.output_filter.bind(action_space)
        self.memory = (
            params.memory.build(
                self.observation_space, self.action_space, self.rng, self.memory_extras()
            )
            if params.memory is not None
            else None
        )
        self.exploration = (
            params.exploration.build(self.action_space, self.rng)
            if params.exploration is not None
            else None
        )
        self.networks = {
            name: NetworkWrapper(
                p, self._inputs_space(p), self.action_space, self.device, self.torch_generator
            )
            for name, p in params.network_wrappers.items()
        }
        self.phase = RunPhase.HEATUP
        self.state: Observation = {}
        """The current filtered observation the agent acts on."""
        self.last_action: np.ndarray | None = None
        self.goal: Any = None
        """The goal (or option) given by the level above, if any."""
        self.explore = True
        """False while the level above tests a subgoal: act without exploration (HAC)."""
        self.log_behaviour = False
        """Give each action's probability with it (`ActionInfo.extras`): a dataset is being
        recorded (`coach.batch.recording`)."""
        self.last_info: ActionInfo | None = None
        """What the agent decided last."""
        self.env_steps = 0
        """Env steps acted and stored in heatup and training."""
        self.training_env_steps = 0
        """Env steps acted in training (the clock of the training schedule)."""
        self.training_rounds = 0
        self.training_steps = 0
        """Gradient steps taken."""
        self.episodes = 0
        """Episodes finished in heatup and training."""
        self._random_block: np.ndarray = np.empty(0)
        self._random_cursor = 0

    def _inputs_space(self, network: NetworkParameters) -> spaces.Dict:
        """What a network may read: the observation, and the action if it embeds one (the
        critic of a continuous-action agent, Q(s, a))."""
        if "action" not in network.input_embedders or "action" in self.observation_space.spaces:
            return self.observation_space
        return spaces.Dict({**self.observation_space.spaces, "action": self.action_space})

    # -- the algorithm's hooks --------------------------------------------------------------

    def choose_action(self, state: Observation) -> ActionInfo:
        """The actions for a batch of (filtered) states, in training or evaluation."""
        raise NotImplementedError

    def learn_from_batch(self, batch: Batch) -> dict[str, float]:
        """One gradient step on a batch; returns named losses for logging."""
        raise NotImplementedError

    def after_training_round(self) -> None:
        """Called after each training round (target syncs and the like)."""

    def tensors(self, observation: Observation) -> dict[str, torch.Tensor]:
        """A batch of observations as tensors on the agent's device."""
        return {k: torch.as_tensor(v, device=self.device) for k, v in observation.items()}

    def memory_extras(self) -> dict[str, spaces.Space]:
        """Further columns the memory keeps per transition (see `store`); none by default."""
        return {}

    # -- the loop the level manager drives ---------------------------------------------------

    def reset(self, response: EnvResponse) -> None:
        """Start from the first observations of new episodes in every env."""
        if self.memory is not None:
            self.memory.end_episodes()
        every_env = np.arange(len(response.reward))
        self.input_filter.end_episodes(np.ones(len(every_env), dtype=bool))
        self.state = self.input_filter.start_episodes(response.observation, every_env)

    def set_goal(self, goal: Any) -> None:
        """Take a goal (or option) from the level above."""
        self.goal = goal

    def act(self) -> ActionInfo:
        """Decide actions for the current state; ``action`` is returned in env terms."""
        if self.phase is RunPhase.HEATUP:
            info = ActionInfo(self._random_actions())
        else:
            info = self.choose_action(self.state)
        self.last_action = info.action
        self.last_info = info
        if self.output_filter.action_filters:
            info.action = self.output_filter.filter(info.action)
        return info

    def _random_actions(self) -> np.ndarray:
        """Uniform random actions, drawn in blocks: one draw per step would cost more than
        the step of a cheap environment."""
        if self._random_cursor >= len(self._random_block):
            block = random_actions(self.action_space, RANDOM_BLOCK * self.num_envs, self.rng)
            self._random_block = block.reshape(RANDOM_BLOCK, self.num_envs, *block.shape[1:])
            self._random_cursor = 0
        self._random_cursor += 1
        return self._random_block[self._random_cursor - 1]

    def observe(self, response: EnvResponse) -> None:
        """Take the environment's response to the last action: store it, move the state on."""
        learning = self.phase is not RunPhase.EVALUATE
        next_state = self.input_filter.filter_observation(response.next_observation, learning)
        if learning:
            reward = self.input_filter.filter_reward(response.reward, update=True)
            self.store(next_state, reward, response)
            count = len(reward)
            self.env_steps += count
            if self.phase is RunPhase.TRAIN:
                self.training_env_steps += count
        if response.next_observation is response.observation:
            self.state = next_state
            return
        done = response.terminated | response.truncated
        self.input_filter.end_episodes(done)
        self.handle_episode_ended(done, response)
        if not self.input_filter.filters_observations:
            self.state = response.observation
            return
        rows = np.flatnonzero(done)
        first = self.input_filter.start_episodes(
            {k: v[rows] for k, v in response.observation.items()}, rows
        )
        self.state = {k: v.copy() for k, v in next_state.items()}
        for key, value in first.items():
            self.state[key][rows] = value

    def store(self, next_state: Observation, reward: np.ndarray, response: EnvResponse) -> None:
        """Keep a step for learning (default: in the memory, as it is)."""
        if self.memory is not None:
            self.memory.store(
                self.state,
                self.last_action,
                reward,
                next_state,
                response.terminated,
                response.truncated,
            )

    def handle_episode_ended(self, done: np.ndarray, response: EnvResponse) -> None:
        """Bookkeeping for the envs whose episode ended in this step."""
        for i in np.flatnonzero(done):
            if self.phase is not RunPhase.EVALUATE:
                self.episodes += 1
            info = response.infos[i] if response.infos else {}
            # Goal-based tasks and the levels of a hierarchy: 1 per goal reached.
            success = float(info["is_success"]) if "is_success" in info else None
            self.log.episode(
                self.phase,
                float(response.episode_return[i]),
                int(response.episode_length[i]),
                success,
            )
        if self.exploration is not None:
            self.exploration.episode_ended(done)
        if self.exploration is not None and self.phase is RunPhase.TRAIN:
            for tag, value in self.exploration.values().items():
                self.log.scalar(f"Exploration/{tag}", value)

    def train(self) -> int:
        """Run the training rounds that are due; returns the gradient steps taken."""
        if self.phase is not RunPhase.TRAIN or self.memory is None:
            return 0
        memory = self.memory
        algorithm = self.params.algorithm
        due = (
            self.training_env_steps // algorithm.num_consecutive_playing_steps.num_steps
            - self.training_rounds
        )
        if due > 0 and len(memory) == 0:
            # Nothing stored yet (a memory that keeps whole episodes, no heatup): those
            # rounds are skipped, not made up for later.
            self.training_rounds += due
            return 0
        steps = algorithm.num_consecutive_training_steps
        for _ in range(due):
            for name, mean in self.training_round(steps).items():
                self.log.scalar(f"Loss/{name}", mean)
        return due * steps

    def training_round(self, steps: int) -> dict[str, float]:
        """``steps`` gradient steps on batches sampled from the memory, then the round's
        bookkeeping (`after_training_round`); returns the mean of each named loss."""
        assert self.memory is not None
        totals: dict[str, float] = {}
        for _ in range(steps):
            losses = self.learn_from_batch(self.memory.sample(self.params.algorithm.batch_size))
            for name, value in losses.items():
                totals[name] = totals.get(name, 0.0) + value
        self.training_rounds += 1
        self.training_steps += steps
        self.after_training_round()
        return {name: total / steps for name, total in totals.items()}

    # -- rollout workers (coach.parallel) ---------------------------------------------------

    def policy_state(self) -> dict[str, Any]:
        """What an acting copy of this agent needs from it: the online weights of every
        network, the filters' running statistics and the exploration clock (training env
        steps acted so far)."""
        return {
            "networks": {name: net.online.state_dict() for name, net in self.networks.items()},
            "statistics": [s.state_dict() for s in self.input_filter.running_statistics()],
            "exploration_steps": self.exploration.steps if self.exploration is not None else 0,
        }

    def load_policy_state(self, state: dict[str, Any]) -> None:
        """Act with the weights of `policy_state` (the exploration schedules move on from the
        learner's clock)."""
        for name, net in self.networks.items():
            net.online.load_state_dict(state["networks"][name])
        statistics = self.input_filter.running_statistics()
        for stats, saved in zip(statistics, state["statistics"], strict=True):
            stats.load_state_dict(saved)
        if self.exploration is not None:
            self.exploration.steps = int(state["exploration_steps"])

    def ingest(
        self, steps: list[dict[str, Any]], env_steps: int, phase: RunPhase, source: int = 0
    ) -> None:
        """Take steps acted elsewhere (by rollout workers) as if observed here: each is the
        keyword arguments of one `Memory.store` call, ``env_steps`` the env steps they took,
        ``source`` who took them (`Memory.stream`).

        The training schedule and the exploration clock count them as this agent's own.
        """
        if self.memory is not None:
            memory = self.memory.stream(source)
            for step in steps:
                memory.store(**step)
        self.env_steps += env_steps
        if phase is RunPhase.TRAIN:
            self.training_env_steps += env_steps
            if self.exploration is not None:
                self.exploration.steps += env_steps

    # -- checkpoints ------------------------------------------------------------------------

    def state_dict(self, include_memory: bool = False) -> dict[str, Any]:
        """Networks, optimizers, filters, exploration, counters, generators and the current
        state; the memory's contents only when asked."""
        return {
            "memory": self.memory.state_dict() if include_memory and self.memory else None,
            "rng": self.rng.bit_generator.state,
            "torch_rng": self.torch_generator.get_state(),
            "random_block": self._random_block,
            "random_cursor": self._random_cursor,
            "current_state": self.state,
            "networks": {name: net.state_dict() for name, net in self.networks.items()},
            "input_filter": self.input_filter.state_dict(),
            "output_filter": self.output_filter.state_dict(),
            "exploration": self.exploration.state_dict() if self.exploration else {},
            "counters": {
                "env_steps": self.env_steps,
                "training_env_steps": self.training_env_steps,
                "training_rounds": self.training_rounds,
                "training_steps": self.training_steps,
                "episodes": self.episodes,
            },
        }

    def load_state_dict(self, state: dict[str, Any], episodes_in_flight: bool = True) -> None:
        """Restore what `state_dict` returned; the current state only with
        ``episodes_in_flight`` (when the environment's episodes were restored too)."""
        if set(state["networks"]) != set(self.networks):
            raise CoachError(
                f"the checkpoint has networks {sorted(state['networks'])}, agent {self.name!r} "
                f"has {sorted(self.networks)}"
            )
        if state.get("memory") is not None and self.memory is not None:
            self.memory.load_state_dict(state["memory"])
        self.rng.bit_generator.state = state["rng"]
        self.torch_generator.set_state(state["torch_rng"])
        self._random_block = state["random_block"]
        self._random_cursor = int(state["random_cursor"])
        if episodes_in_flight:
            self.state = state["current_state"]
        for name, net in self.networks.items():
            net.load_state_dict(state["networks"][name])
        self.input_filter.load_state_dict(state["input_filter"])
        self.output_filter.load_state_dict(state["output_filter"])
        if self.exploration is not None:
            self.exploration.load_state_dict(state["exploration"])
        for name, value in state["counters"].items():
            setattr(self, name, int(value))
