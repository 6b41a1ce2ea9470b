"""Batch RL: an agent learns from a stored dataset, without acting in its environment.

    improve():
        fill the agent's memory with the dataset's transitions (once, when the graph is built)
        for each epoch (a pass of |dataset| / batch_size gradient steps):
            train on batches sampled from the memory
            off-policy evaluation of the agent's policy on the dataset (logged as OPE/...)
            every steps_between_evaluation_periods epochs: evaluate in the real environment

The dataset is a local Minari dataset (`coach.batch.datasets`), recorded by a run with
``--record-dataset``; its spaces must be the environment's. The environment is built as in
any run, but only evaluations act in it. A batch run's clock is its gradient steps: its
logs, checkpoints and budgets count them where other runs count env steps.

The off-policy estimates (`coach.batch.ope`) use the behaviour policy's action probabilities that
the dataset logged, a reward model (an MLP from the state to each action's reward, fitted
once on the dataset) and the agent's own Q-values: they tell how good the policy is before
it is deployed, and the real evaluations show how far to trust them. They are in the
rewards the agent learns from (after its reward filters), as its Q-values are.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from coach import validation as check
from coach.agents.agent import Agent
from coach.agents.parameters import AgentParameters
from coach.batch.checks import check_spaces
from coach.batch.datasets import load_dataset, transitions
from coach.batch.episodes import Dataset
from coach.batch.off_policy import OffPolicyData, estimate_off_policy, prepare_off_policy
from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps, Epochs
from coach.core.types import Transition
from coach.environments.environment import Environment
from coach.environments.gym_environment import GymEnvironment
from coach.environments.parameters import GymEnvironmentParameters
from coach.errors import CoachError, RunInterrupted
from coach.filters.filter import ObservationFilter, RewardFilter
from coach.graph_managers.basic_rl import BasicRLGraphManager
from coach.graph_managers.parameters import RunContext, ScheduleParameters
from coach.level_manager import Level, LevelManager
from coach.memories.experience_replay import ExperienceReplayParameters
from coach.memories.prioritized_experience_replay import PrioritizedExperienceReplayParameters
from coach.networks.parameters import MiddlewareParameters, NetworkParameters
from coach.validation import InvalidParameter


@dataclass(slots=True, kw_only=True)
class BatchRLParameters:
    """Where a batch run's data comes from, and how it is judged."""

    dataset: str = ""
    """A local Minari dataset: its id (``cartpole/dqn-half-v0``) or its directory."""
    dataset_recipe: str = ""
    """How the dataset is made (commands), shown when it is missing."""
    off_policy_evaluation: bool = True
    """Estimate the policy's value from the dataset after each epoch (discrete agents with
    Q-values, on datasets that logged their action probabilities)."""
    reward_model: NetworkParameters = field(
        default_factory=lambda: NetworkParameters(
            middleware=MiddlewareParameters(scheme=[64, 64]), learning_rate=1e-3
        )
    )
    """The reward model of the off-policy estimates (its head is replaced by one reward per
    action)."""
    reward_model_epochs: int = 5
    """Passes over the dataset that fit the reward model."""

    def validate(self) -> None:
        if not self.dataset:
            raise InvalidParameter("dataset", "must name a local Minari dataset", self.dataset)
        check.whole("reward_model_epochs", self.reward_model_epochs, 1)


def batch_schedule(
    epochs: int, evaluation_episodes: int = 10, epochs_between_evaluations: int = 1
) -> ScheduleParameters:
    """A batch run's schedule: ``epochs`` over the dataset, real evaluations between them."""
    return ScheduleParameters(
        heatup_steps=EnvironmentSteps(0),
        improve_steps=Epochs(epochs),
        steps_between_evaluation_periods=Epochs(epochs_between_evaluations),
        evaluation_steps=EnvironmentEpisodes(evaluation_episodes),
    )


class BatchRLGraphManager(BasicRLGraphManager):
    """One agent learning from a dataset, evaluated in its environment.

    Args:
        agent_params: The agent (its memory is filled with the dataset).
        env_params: The environment the dataset came from (for evaluations).
        schedule_params: Epochs (``improve_steps``, ``steps_between_evaluation_periods`` in
            `Epochs`) and evaluation episodes; see `batch_schedule`.
        batch_params: The dataset and the off-policy evaluation.
        name: The graph's name.
    """

    budget_units = (Epochs,)
    """A batch run's budget and evaluation period are passes over its dataset."""

    def __init__(
        self,
        agent_params: AgentParameters,
        env_params: GymEnvironmentParameters,
        schedule_params: ScheduleParameters,
        batch_params: BatchRLParameters,
        name: str = "batch_rl_graph",
    ) -> None:
        super().__init__(agent_params, env_params, schedule_params, name)
        self.batch_params = batch_params
        self.dataset: Dataset | None = None
        self.epoch = 0
        """Epochs trained."""
        self._ope_data: OffPolicyData | None = None

    def parameters(self) -> dict[str, Any]:
        return {**super().parameters(), "batch": self.batch_params}

    def acting_graph(self) -> Any:
        raise CoachError(
            "batch RL learns from its dataset, not from acting: it runs no rollout workers (-n)"
        )

    def validate(self, workers: int = 1) -> None:
        super().validate(workers)
        _check_agent(self.agent_params)

    # -- building ---------------------------------------------------------------------------

    def _build(self, context: RunContext) -> tuple[Environment, Sequence[Level]]:
        dataset = self._load_dataset()
        environment = self.env_params.build()
        try:
            if not isinstance(environment, GymEnvironment):
                raise CoachError("batch RL evaluates in a gymnasium environment (sync vectorized)")
            first = environment.envs[0]
            check_spaces(dataset, first.observation_space, first.action_space)
            columns = transitions(dataset, self.env_params.observation_key)
            count = len(columns["reward"])
            params = copy.deepcopy(self.agent_params)
            replay = (ExperienceReplayParameters, PrioritizedExperienceReplayParameters)
            if isinstance(params.memory, replay) and params.memory.max_size < count:
                params.memory.max_size = count  # the whole dataset, nothing overwritten
            agent = self._make_agent(params, environment, context)
            self._fill(agent, columns)
        except BaseException:
            environment.close()
            raise
        self.dataset = dataset
        if self.logger is not None:
            self.logger.info(
                f"dataset {dataset.name}: {dataset.num_episodes} episodes, {count} transitions "
                f"({dataset.path})"
            )
        if self.batch_params.off_policy_evaluation:
            self._ope_data = self._prepare_ope(agent, dataset, columns)
        return environment, [LevelManager("main_level", agent, environment)]

    def _load_dataset(self) -> Dataset:
        params = self.batch_params
        try:
            return load_dataset(params.dataset)
        except CoachError as error:
            if params.dataset_recipe:
                raise CoachError(f"{error}\nmake it with:\n{params.dataset_recipe}") from None
            raise

    def _fill(self, agent: Agent, columns: dict[str, Any]) -> None:
        """The dataset's transitions into the agent's memory, through its input filter."""
        if agent.memory is None:
            raise CoachError(f"{type(agent).__name__} has no memory to hold a dataset")
        extras = sorted(agent.memory_extras())
        if extras:
            raise CoachError(
                f"{type(agent).__name__} stores {extras} with each transition, which a "
                f"dataset's one-step transitions do not give (n-step returns: keep "
                f"agent.algorithm.n_step at 1 in batch RL)"
            )
        filters = agent.input_filter
        state = filters.filter_observation(columns["state"], True)
        next_state = filters.filter_observation(columns["next_state"], False)
        reward = filters.filter_reward(columns["reward"].astype(np.float32), update=True)
        agent.memory.store(
            Transition(
                state=state,
                action=columns["action"],
                reward=reward,
                next_state=next_state,
                terminated=columns["terminated"],
                truncated=columns["truncated"],
            )
        )

    # -- the clock --------------------------------------------------------------------------

    def _total_env_steps(self) -> int:
        """Gradient steps, plus the evaluations' env steps (which the logs' clock leaves
        out): a batch run's logs and checkpoints count its gradient steps."""
        own = self.environment.total_steps if self.environment is not None else 0
        return own + self.training_steps

    # -- the run ----------------------------------------------------------------------------

    def improve(self) -> None:
        """Epochs over the dataset, with off-policy estimates and real evaluations."""
        schedule = self.schedule_params
        epochs = schedule.improve_steps.num_steps
        period = max(schedule.steps_between_evaluation_periods.num_steps, 1)
        # The bar moves with the gradient steps, a fraction of an epoch at a time.
        first, trained, per_epoch = self.epoch, self.training_steps, self._steps_per_epoch()
        with self.report.bar(
            "train",
            schedule.improve_steps,
            lambda: first + (self.training_steps - trained) / per_epoch,
            leave=True,
        ):
            # A run stopped during an evaluation resumes from the run as it was before it
            # (its epochs counted): the evaluation runs again first, whole.
            if self._evaluation_due(period):
                self.evaluation_period(schedule.evaluation_steps)
            while self.epoch < epochs and not self.stopped_early:
                self.train_epoch()
                self.off_policy_evaluation()
                if self._evaluation_due(period):
                    self.evaluation_period(schedule.evaluation_steps)
                if self._checkpoints is not None and self._checkpoints.due(self.env_steps):
                    self.save_checkpoint()

    def _evaluation_due(self, period: int) -> bool:
        """Whether the real evaluation after the epochs done (one every ``period``) is yet
        to run."""
        evaluating = self.schedule_params.evaluation_steps.num_steps > 0
        return evaluating and len(self.evaluations) < self.epoch // period

    def _steps_per_epoch(self) -> int:
        """The gradient steps of one pass over the dataset: |dataset| / batch_size."""
        agent = self.levels[0].only_agent("batch RL")
        assert agent.memory is not None
        return math.ceil(len(agent.memory) / agent.params.algorithm.batch_size)

    def train_epoch(self) -> dict[str, float]:
        """One pass: |dataset| / batch_size gradient steps; returns the mean losses."""
        self.phase = RunPhase.TRAIN
        agent = self.levels[0].only_agent("batch RL")
        steps = self._steps_per_epoch()
        started = time.perf_counter()
        totals: dict[str, float] = {}
        done = 0
        while done < steps and self.stop_requested is None:
            # One step per round: target syncs and the like keep their gradient-step clock.
            for name, value in agent.training_round(1).items():
                totals[name] = totals.get(name, 0.0) + value
            done += 1
            self.report.tick()
        if done == steps:  # an interrupted epoch is run again in full on --resume
            self.epoch += 1
        means = {name: total / max(done, 1) for name, total in totals.items()}
        if self.logger is not None:
            run = f"main_level.{agent.name}"
            for name, value in means.items():
                self.logger.scalar(run, f"Loss/{name}", value)
            self.logger.scalar("graph", "Train/epoch", self.epoch)
            seconds = time.perf_counter() - started
            self.logger.scalar("graph", "Time/training_steps_per_second", done / seconds)
            losses = "  ".join(f"{k} {v:.4g}" for k, v in means.items())
            self.logger.info(
                f"epoch {self.epoch:>3}/{self.schedule_params.improve_steps.num_steps}  "
                f"{done} gradient steps in {seconds:.1f} s  {losses}"
            )
        if self.stop_requested is not None:
            raise RunInterrupted(self.stop_requested)
        return means

    # -- off-policy evaluation --------------------------------------------------------------

    def _prepare_ope(
        self, agent: Agent, dataset: Dataset, columns: dict[str, Any]
    ) -> OffPolicyData | None:
        """What every epoch's estimates share (`prepare_off_policy`); ``None``, said in the
        log, where the estimates cannot be made."""
        prepared = prepare_off_policy(
            agent, columns, self.batch_params.reward_model, self.batch_params.reward_model_epochs
        )
        if isinstance(prepared, str):
            if self.logger is not None:
                self.logger.info(f"no off-policy evaluation: {prepared}")
            return None
        return prepared

    def off_policy_evaluation(self) -> dict[str, float] | None:
        """The estimates of the agent's current policy on the dataset, logged as ``OPE/``."""
        if self._ope_data is None:
            return None
        estimates = estimate_off_policy(self.levels[0].only_agent("batch RL"), self._ope_data)
        if self.logger is not None:
            # WIS is undefined (nan) when no episode follows the policy all the way.
            for name, value in estimates.items():
                if math.isfinite(value):
                    self.logger.scalar("graph", f"OPE/{name}", value)
            self.logger.info(
                "off-policy evaluation: "
                + "  ".join(
                    f"{k} {v:.3f}" if math.isfinite(v) else f"{k} n/a" for k, v in estimates.items()
                )
            )
        return estimates

    # -- checkpoints ------------------------------------------------------------------------

    def state_dict(self, include_memory: bool = False) -> dict[str, Any]:
        state = super().state_dict(include_memory)
        state["batch"] = {"epoch": self.epoch, **self._dataset_identity()}
        return state

    def _dataset_identity(self) -> dict[str, Any]:
        """What a checkpoint keeps of the dataset it learned from, to refuse another."""
        if self.dataset is None:
            return {}
        return {"dataset": self.dataset.name, "transitions": self.dataset.total_steps}

    def load_state_dict(self, state: dict[str, Any], whole_run: bool = True) -> None:
        super().load_state_dict(state, whole_run)
        if whole_run and "batch" in state:
            saved, ours = state["batch"], self._dataset_identity()
            learned = {key: saved[key] for key in ours if key in saved}
            if learned and learned != ours:
                raise CoachError(
                    f"the checkpoint learned from dataset {saved['dataset']!r} "
                    f"({saved['transitions']} transitions), but this run loaded "
                    f"{ours['dataset']!r} ({ours['transitions']} transitions): resume with "
                    f"the same dataset (a full id with its -vN)"
                )
            self.epoch = int(saved["epoch"])


def _check_agent(params: AgentParameters) -> None:
    """Refuse what cannot learn from a dataset's transitions, naming what to change.

    A batch run counts no env steps, so a target network synced every so many env steps
    would never be synced; the dataset's actions are the environment's, which an output
    filter would have to map back; and the dataset's rows go through the input filter all at
    once, without episodes, which a filter with per-episode history (frame stacking, the
    discounted returns of reward normalization) cannot take.
    """
    period = getattr(params.algorithm, "num_steps_between_copying_online_weights_to_target", None)
    if isinstance(period, EnvironmentSteps):
        raise CoachError(
            f"a batch run counts gradient steps, not env steps: set "
            f"agent.algorithm.num_steps_between_copying_online_weights_to_target="
            f"TrainingSteps({period.num_steps}) (it is {period!r}, which would never sync "
            f"the target network)"
        )
    if params.output_filter.action_filters:
        names = [type(f).__name__ for f in params.output_filter.action_filters]
        raise CoachError(
            f"a batch agent acts in the environment's action space, as its dataset was "
            f"recorded: remove agent.output_filter's action filters {names}"
        )
    stateful = [
        type(f).__name__
        for filters in params.input_filter.observation_filters.values()
        for f in filters
        if type(f).start_episodes is not ObservationFilter.start_episodes
    ] + [
        type(f).__name__
        for f in params.input_filter.reward_filters
        if type(f).reset is not RewardFilter.reset
    ]
    if stateful:
        raise CoachError(
            f"a batch run filters the dataset's rows all at once, without episodes: the "
            f"input filters {stateful} keep per-episode history and cannot be used (stack "
            f"frames in the environment instead, e.g. gymnasium's FrameStackObservation)"
        )
