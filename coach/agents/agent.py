"""The agent base: observe, act, train, handle_episode_ended.

An agent sees its environment only through what its level manager hands it: it acts on its
current (filtered) state, observes the environment's batched response, stores what it learns
from, and trains when its own schedule says so. It composes two sides, built once its
networks are:

- the acting side, a `Policy` (`coach.agents.acting`, built by `make_policy`): from states
  to actions, with the exploration; what evaluation, dataset recording and rollout workers
  act with;
- the learning side, a `Learner` (`coach.agents.learning`, built by `make_learner`): the
  algorithm's update on a batch, its optimizers and targets; none (nor memory, targets or
  optimizers) in an agent built with ``learns=False`` (a rollout worker's).

Everything else here is bookkeeping shared by every algorithm: filters, the current state,
storing, the training schedule, counters and checkpoints.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
import torch
from gymnasium import spaces

from coach.agents.acting import Policy
from coach.agents.agent_state import agent_state, restore_agent
from coach.agents.hidden_state import recurrent_extras
from coach.agents.learning import Clock, Learner, follow_learning_rate, round_mean
from coach.agents.log import AgentLog, NullLog, log_ended_episodes
from coach.agents.networks import build_networks
from coach.agents.parameters import AgentParameters
from coach.core.run_phase import EVALUATE, TRAIN, RunPhase
from coach.core.types import ActionInfo, EnvResponse, Observation, Transition, any_set
from coach.memories.memory import SLOT
from coach.networks.network_wrapper import NetworkWrapper


class Agent:
    """The shared part of every agent.

    An agent whose algorithm learns over sequences (``recurrent = True``) may have networks
    with a recurrent middleware: its policy carries their hidden states per copy, and its
    memory keeps them with every step (`coach.agents.hidden_state`).

    On a multi-agent level a copy is a slot (an agent id in one environment copy), and a
    slot decides only when its id does: at its turns in a turn-based game, until its id
    leaves in a simultaneous one. The agent then acts for some copies (`act` with
    ``rows``), observes the outcomes of some (`observe` with ``rows``: each the outcome of
    the action record the level kept for the slot, `coach.multi_agent.action_records`), and
    begins episodes in slots whose id decides for the first time without an outcome to
    observe (`begin`). Everything it keeps per copy takes any subset of them: the policy's
    hidden states and exploration state step only for the slots that decide (`Policy.act`),
    its per-copy filters only for the rows given, and a memory that keeps each copy's steps
    in order gets the rows' slots with the step (`slots_named`).

    Args:
        params: The agent's parameters.
        observation_space: The environment's observation space (before the input filter).
        action_space: The environment's action space (after the output filter).
        num_envs: How many environment copies the agent acts in at once.
        seed: Seeds the agent's numpy and torch generators.
        device: Torch device of the networks.
        log: Where the agent reports episodes and scalars.
        learns: Build the learning side (memory, learner, optimizers, target networks);
            without it the agent only acts and stores into the memory it is given
            (a rollout worker's).
    """

    recurrent: ClassVar[bool] = False
    """Whether the algorithm learns recurrent networks (over stored sequences)."""
    not_on_workers: ClassVar[str | None] = None
    """Why the algorithm cannot learn from steps that rollout workers acted (``-n``), where
    it cannot: ``coach -n`` refuses it, with this reason, before anything runs."""

    def __init__(
        self,
        params: AgentParameters,
        observation_space: spaces.Dict,
        action_space: spaces.Space,
        num_envs: int,
        seed: int,
        device: str | torch.device = "cpu",
        log: AgentLog | None = None,
        learns: bool = True,
    ) -> None:
        self.params = params
        self.learns = learns
        self.name = params.name
        self.num_envs = num_envs
        self.rng = np.random.default_rng(seed)
        self.device = torch.device(device)
        self.torch_generator = torch.Generator(device=self.device).manual_seed(seed)
        """Draws on the agent's device: sampling, noise, minibatch orders."""
        # Initial weights from the agent's stream on a CPU, else from a CPU one of the seed.
        cpu = self.device.type == "cpu"
        initialization = self.torch_generator if cpu else torch.Generator().manual_seed(seed)
        self.log: AgentLog = log or NullLog()
        self.input_filter = copy.deepcopy(params.input_filter)
        self.output_filter = copy.deepcopy(params.output_filter)
        self.observation_space = self.input_filter.bind(observation_space)
        self.action_space = self.output_filter.bind(action_space)
        self.memory = (
            params.memory.build(
                self.observation_space,
                self.action_space,
                self.rng,
                {**self.memory_extras(), **recurrent_extras(params.network_wrappers)},
            )
            if params.memory is not None and learns
            else None
        )
        acts_in = self.network_action_space()
        self.exploration = (
            params.exploration.build(acts_in, self.rng) if params.exploration is not None else None
        )
        networks = build_networks(
            type(self).__name__,
            self.recurrent,
            params.network_wrappers,
            self.network_inputs(),
            acts_in,
            self.device,
            initialization,
            learns,
        )
        self.networks = self.arrange_networks(networks)
        self.phase = RunPhase.HEATUP
        self.state: Observation = {}
        """The current filtered observation the agent acts on."""
        self.goal: Any = None
        """The goal (or option) given by the level above, if any."""
        self.last_info: ActionInfo | None = None
        """What the agent decided last: the action record its next `observe` stores."""
        self.fresh_observations = False
        """Its environment makes new observation arrays for every response, which its state
        keeps uncopied (told by its level, `join_level`)."""
        self.acts_in_slots = False
        """Its copies are slots of a multi-agent level: some may step without the others
        (told by its level, `join_level`)."""
        self.env_steps = 0
        """Env steps acted and stored in heatup and training."""
        self.training_env_steps = 0
        """Env steps acted in training (the clock of the training schedule)."""
        self.training_rounds = 0
        """Training rounds taken."""
        self.training_steps = 0
        """Gradient steps taken."""
        self.episodes = 0
        """Episodes finished in heatup and training."""
        self.run_clock: Callable[[], Clock] | None = None
        """The clock its learning rate schedule follows where it is not the agent's own: an
        asynchronous worker's follows the whole run's, a hierarchy level's the environment's
        (`schedule_clock`)."""
        self.policy: Policy = self.make_policy()
        """The acting side: what rollout workers, evaluation and recording act with."""
        self.learner: Learner | None = self.make_learner() if learns else None
        """The learning side (none in an agent that only acts)."""

    # -- the algorithm's hooks --------------------------------------------------------------

    def network_inputs(self) -> spaces.Dict:
        """What the networks may read: the (filtered) observation, and any inputs of its own."""
        return self.observation_space

    def network_action_space(self) -> spaces.Space[Any]:
        """The actions the networks and the exploration answer in: the agent's, unless the
        algorithm maps its own onto them (Wolpertinger's embeddings of discrete actions)."""
        return self.action_space

    def arrange_networks(self, networks: dict[str, NetworkWrapper]) -> dict[str, NetworkWrapper]:
        """The networks as the agent keeps them, from those built (default: as they are)."""
        return networks

    def make_policy(self) -> Policy:
        """The acting side, built once the networks and the exploration are."""
        raise NotImplementedError(f"{type(self).__name__} does not make its policy")

    def policy_arguments(self) -> dict[str, Any]:
        """What every `Policy` is built with: the spaces, generators, device, exploration."""
        return {
            "action_space": self.action_space,
            "num_envs": self.num_envs,
            "rng": self.rng,
            "torch_generator": self.torch_generator,
            "device": self.device,
            "exploration": self.exploration,
            "networks": self.networks,
            "observation_space": self.observation_space,
        }

    def make_learner(self) -> Learner:
        """The learning side, built after the acting side."""
        raise NotImplementedError(f"{type(self).__name__} does not make its learner")

    def learner_arguments(self) -> dict[str, Any]:
        """What every `Learner` is built with: the networks, memory, space, device,
        generator and log."""
        return {
            "networks": self.networks,
            "memory": self.memory,
            "action_space": self.action_space,
            "device": self.device,
            "torch_generator": self.torch_generator,
            "log": self.log,
        }

    def clock(self) -> Clock:
        """How far training has come, for the learner."""
        return Clock(self.training_steps, self.training_env_steps, self.episodes)

    def schedule_clock(self) -> Clock:
        """The clock the learning rate schedule follows: the agent's own (`clock`), or the
        one its graph gave it (`run_clock`)."""
        return self.run_clock() if self.run_clock is not None else self.clock()

    def memory_extras(self) -> dict[str, spaces.Space]:
        """Further columns the memory keeps per transition (see `store`); none by default."""
        return {}

    # -- the loop the level manager drives ---------------------------------------------------

    def join_level(self, fresh_observations: bool, in_slots: bool = False) -> None:
        """Called by the level that drives the agent, when it is made: whether the level's
        responses hold new observation arrays every time (``fresh_observations``: the state
        keeps them uncopied, where no filter changes them), and whether the agent's copies
        are slots of a multi-agent level (``in_slots``: some may step without the others)."""
        self.fresh_observations = fresh_observations
        self.acts_in_slots = in_slots

    def end_episodes(self) -> None:
        """The episodes in flight stop before they ended (an evaluation begins, the
        environments restart): what waits for their end to be stored (n-step windows, held
        episodes, a block's last steps) is stored now. Nothing waits after it: a second call
        changes nothing. Agents that hold steps back extend it (and call it up the chain)."""
        if self.memory is not None:
            self.memory.end_episodes()

    def reset(self, response: EnvResponse) -> None:
        """Start from the first observations of new episodes in every env (the episodes in
        flight end first: `end_episodes`)."""
        self.end_episodes()
        every_env = np.arange(len(response.reward))
        self.input_filter.end_episodes(np.ones(len(every_env), dtype=bool))
        self.policy.episodes_started(np.ones(len(every_env), dtype=bool))
        first = self.input_filter.start_episodes(response.observation, every_env)
        self.state = {key: np.array(value) for key, value in first.items()}

    def set_goal(self, goal: Any) -> None:
        """Take a goal (or option) from the level above."""
        self.goal = goal

    def set_subgoal_test(self, testing: bool) -> None:
        """Whether the level above tests the goal it gave now, a subgoal it proposed (HAC's
        subgoal testing, Levy et al., 2019): while it does, the agent acts without
        exploration, so that a subgoal missed is one its policy cannot reach."""
        self.policy.explore = not testing

    def act(self, rows: np.ndarray | None = None) -> ActionInfo:
        """Decide actions for the current state of every copy, or of the copies ``rows``
        (sorted indices: the slots of a multi-agent level that decide now, row for row in
        the record); ``env_action`` is the action in the environment's terms (through the
        output filter)."""
        if rows is None:
            info = self.policy.act(self.state, self.phase)
        else:
            state = {key: value[rows] for key, value in self.state.items()}
            info = self.policy.act(state, self.phase, rows)
        info.env_action = (
            self.output_filter.filter(info.action)
            if self.output_filter.action_filters
            else info.action
        )
        self.last_info = info
        return info

    def observe(
        self, response: EnvResponse, rows: np.ndarray | None = None, info: ActionInfo | None = None
    ) -> None:
        """Take the environment's response to the last action: store it, move the state on.

        Episode boundaries come from the response's flags alone: where ``terminated`` or
        ``truncated`` is set an episode ended, where ``episode_started`` is set the copy's
        ``observation`` begins a new one. The response's arrays stay the environment's: the
        state kept for the next step is a copy, unless the environment makes new ones for every
        response (``fresh_observations``) and no filter changed them.

        With ``rows``, the response holds the outcomes of the copies ``rows`` only, each of
        the action it took last, whenever that was: ``info`` holds those (row for row).
        """
        if rows is not None:
            assert info is not None, "the outcomes of some copies come with their actions"
            self.observe_slots(response, rows, info)
            return
        learning = self.phase is not EVALUATE
        filters = self.input_filter
        fresh = self.fresh_observations
        plain = fresh and not filters.filters_observations  # the environment's arrays as they are
        next_state = response.next_observation
        if not plain:
            next_state = filters.filter_observation(next_state, learning)
        if learning:
            info = self.last_info
            assert info is not None, "observe follows act"
            self.keep_step(self.state, info, next_state, response)
        if any_set(response.terminated) or any_set(response.truncated):
            done = response.done
            self.input_filter.end_episodes(done)
            self.handle_episode_ended(done, response)
        if self.policy.recurrent and any_set(response.episode_started):
            self.policy.episodes_started(response.episode_started)
        if plain:
            self.state = response.observation
        else:
            self.state = filters.state_after(response, next_state, fresh)

    def keep_step(
        self,
        state: Observation,
        info: ActionInfo,
        next_state: Observation,
        response: EnvResponse,
        rows: np.ndarray | None = None,
    ) -> None:
        """Store the step from ``state`` (filtered) taken with ``info`` (the copies ``rows``,
        or every copy), its reward filtered, and count it on the agent's clocks."""
        reward = response.reward
        if self.input_filter.reward_filters:
            reward = self.input_filter.filter_reward(reward, True, rows)
        # Transition's fields in their order. The extras are a fresh record per action: no
        # copy needed.
        step = Transition(
            state,
            info.action,
            reward,
            next_state,
            response.terminated,
            response.truncated,
            info.memory_extras,
        )
        self.store(step, info, rows)
        self.env_steps += len(reward)
        if self.phase is TRAIN:
            self.training_env_steps += len(reward)

    def observe_slots(self, response: EnvResponse, rows: np.ndarray, info: ActionInfo) -> None:
        """`observe` for the outcomes of the copies ``rows`` (row for row in ``response``):
        their steps stored with the action records they were taken with (``info``, row for
        row), their state moved on, the other copies' untouched."""
        learning = self.phase is not EVALUATE
        next_state = self.input_filter.filter_observation(response.next_observation, learning, rows)
        if learning:
            state = {key: value[rows] for key, value in self.state.items()}
            self.keep_step(state, info, next_state, response, rows)
        done = response.done
        if done.any():
            copies = np.zeros(self.num_envs, dtype=bool)
            copies[rows[done]] = True
            self.input_filter.end_episodes(copies)
            self.handle_episode_ended(done, response, copies)
        started = response.episode_started
        if self.policy.hidden and started.any():
            copies = np.zeros(self.num_envs, dtype=bool)
            copies[rows[started]] = True
            self.policy.episodes_started(copies)
        moved_on = self.input_filter.state_after(response, next_state, fresh=False, rows=rows)
        for key, value in moved_on.items():
            self.state[key][rows] = value

    def begin(self, observation: Observation, rows: np.ndarray) -> None:
        """Episodes start in the copies ``rows`` at ``observation`` (row for row) without an
        outcome to observe: a slot whose id decides for the first time in an episode (the
        second player of a turn-based game, an id back after its copy reset)."""
        first = self.input_filter.start_episodes(observation, rows)
        for key, value in first.items():
            self.state[key][rows] = value
        copies = np.zeros(self.num_envs, dtype=bool)
        copies[rows] = True
        self.policy.episodes_started(copies)

    def store(self, step: Transition, info: ActionInfo, rows: np.ndarray | None = None) -> None:
        """Keep a step for learning (default: in the memory, as it is); ``info`` is the
        action record the step was taken with, ``rows`` the copies of its rows (``None``:
        every copy, in order)."""
        if rows is not None or self.acts_in_slots:
            step = self.slots_named(step, rows)
        if self.memory is not None:
            self.memory.store(step)

    def slots_named(self, step: Transition, rows: np.ndarray | None) -> Transition:
        """``step`` with its rows' slots named in the `SLOT` column, where the agent's memory
        keeps each slot's steps in order (its parameters' ``ordered``): the steps of some
        slots (``rows``), and on a rollout worker every step (the learner's memory places
        them)."""
        if not getattr(self.params.memory, "ordered", False):
            return step
        if rows is None:
            if self.learns:
                return step  # every slot, in order: as the memory takes a single agent's steps
            rows = np.arange(self.num_envs)
        return replace(step, extras={**step.extras, SLOT: rows})

    def handle_episode_ended(
        self, done: np.ndarray, response: EnvResponse, copies: np.ndarray | None = None
    ) -> None:
        """Bookkeeping for the envs whose episode ended in this step: ``done`` masks the
        response's rows, ``copies`` the agent's copies they are (``done`` itself when the
        response has a row per copy)."""
        if self.phase is not RunPhase.EVALUATE:
            self.episodes += int(np.count_nonzero(done))
        log_ended_episodes(self.log, self.phase, done, response)
        self.policy.episodes_ended(done if copies is None else copies)
        if self.exploration is not None and self.phase is RunPhase.TRAIN:
            for tag, value in self.exploration.values().items():
                self.log.scalar(f"Exploration/{tag}", value)

    def train(self) -> int:
        """Run the training rounds that are due; returns the gradient steps taken."""
        if self.phase is not TRAIN or self.memory is None or self.learner is None:
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
        bookkeeping (`Learner.end_round`); returns the mean of each named loss."""
        assert self.memory is not None and self.learner is not None
        batch_size = self.params.algorithm.batch_size
        self.follow_learning_rate()
        losses: dict[str, list[float | torch.Tensor]] = {}
        for batch in self.memory.batches(batch_size, steps):
            for name, value in self.learner.learn(batch).items():
                losses.setdefault(name, []).append(value)
        self.training_rounds += 1
        self.training_steps += steps
        self.learner.end_round(self.clock())
        return {name: round_mean(values) for name, values in losses.items()}

    def follow_learning_rate(self) -> None:
        """Before a training round: the networks' learning rates from the algorithm's
        ``learning_rate_schedule`` or ``learning_rate_decay``, if it has one, at the count of
        its ``learning_rate_clock``."""
        algorithm = self.params.algorithm
        follow_learning_rate(
            self.networks,
            algorithm.learning_rate_schedule,
            algorithm.learning_rate_decay,
            self.schedule_clock(),
            algorithm.learning_rate_clock,
        )

    # -- checkpoints (`coach.agents.agent_state`) ------------------------------------------

    def state_dict(self, include_memory: bool = False) -> dict[str, Any]:
        """What a checkpoint holds of the agent (`agent_state`)."""
        return agent_state(self, include_memory)

    def load_state_dict(self, state: dict[str, Any], episodes_in_flight: bool = True) -> None:
        """Restore what `state_dict` returned (`restore_agent`)."""
        restore_agent(self, state, episodes_in_flight)
