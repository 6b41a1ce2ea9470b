"""Direct Future Prediction (Dosovitskiy and Koltun, "Learning to Act by Predicting the
Future", ICLR 2017), the agent that won the 2016 ViZDoom competition's full deathmatch.

Instead of a return, the network predicts how the measurements (``measurements``, an
observation key: health, ammo, frags in Doom, `coach.environments.measurements`) will have
changed after each of several temporal offsets (1, 2, 4, 8, 16, 32 steps), for every
action, given the observation, the measurements and a goal. A goal weighs each measurement
at each offset; an action's value is its predictions weighed by the goal, and the agent acts
e-greedily on those values.

- The network reads three inputs through separate embedders: the observation, the
  measurements and the goal (``goal``, (offsets * measurements,)); its head splits the
  predictions into an expectation over the actions and each action's centred deviation
  (`coach.networks.future_heads`).
- When an episode ends, each step's targets are the changes of its measurements at each
  offset, divided by ``target_scales``: after a terminated episode's end, either unknown
  (``targets_after_episode_end="ignore"``, left out of the loss) or the final measurements'
  (``"last_step"``); after a cut one (time limit, restart), unknown.
- A gradient step regresses the taken action's predictions on the known targets (squared
  error summed over the predictions, averaged over the batch).
- The goal is ``goal_vector`` (a weight per measurement) times ``future_measurements_weights``
  (weights of the last offsets, the earlier ones weighing 0); evaluation may pursue another
  (``evaluation_goal_vector``), and `DFPAgent.set_goal_vector` changes either at any time.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from coach import validation as check
from coach.agents.acting import Policy, QPolicy
from coach.agents.agent import Agent
from coach.agents.algorithm import AlgorithmParameters
from coach.agents.held import HoldsEpisodes
from coach.agents.learning import Learner, on_device
from coach.agents.parameters import AgentParameters
from coach.core.run_phase import RunPhase
from coach.core.spaces import first_action
from coach.core.step_units import EnvironmentSteps
from coach.core.types import Batch, Transition
from coach.environments.measurements import MEASUREMENTS
from coach.errors import CoachError
from coach.exploration.e_greedy import EGreedyParameters
from coach.exploration.exploration_policy import ExplorationParameters
from coach.memories.experience_replay import ExperienceReplayParameters
from coach.memories.future_measurements import AFTER_END, FUTURE, future_targets
from coach.memories.held_episodes import HeldEpisodes
from coach.memories.memory import MemoryParameters
from coach.networks.future_heads import FutureMeasurementsHeadParameters
from coach.networks.parameters import (
    InputEmbedderParameters,
    MiddlewareParameters,
    NetworkParameters,
)

GOAL = "goal"
"""The network input of the goal."""


@dataclass(slots=True, kw_only=True)
class DFPAlgorithmParameters(AlgorithmParameters):
    """DFP's parameters (the original Coach's names and defaults)."""

    num_predicted_steps_ahead: int = 6
    """Temporal offsets predicted: 1, 2, 4, ..., 2 ** (n - 1) steps ahead."""
    goal_vector: list[float] = field(default_factory=lambda: [1.0])
    """The goal's weight of each measurement (positive: more is better)."""
    future_measurements_weights: list[float] = field(default_factory=lambda: [0.5, 0.5, 1.0])
    """The goal's weight of each of the last offsets (the earlier ones weigh 0)."""
    evaluation_goal_vector: list[float] | None = None
    """The measurement weights evaluation pursues; ``None``: ``goal_vector``."""
    target_scales: list[float] | None = None
    """Each measurement's targets are divided by its scale (``None``: 1 each)."""
    targets_after_episode_end: str = "ignore"
    """Beyond a terminated episode's end: ``ignore`` (left out of the loss) or
    ``last_step`` (the measurements stay as the episode left them)."""
    num_consecutive_playing_steps: EnvironmentSteps = field(
        default_factory=lambda: EnvironmentSteps(8)
    )
    """Env steps between two training rounds."""
    batch_size: int = 64
    """Transitions per gradient step."""

    @property
    def offsets(self) -> list[int]:
        """The temporal offsets, in steps."""
        return [2**i for i in range(self.num_predicted_steps_ahead)]

    def validate(self) -> None:
        AlgorithmParameters.validate(self)
        check.whole("num_predicted_steps_ahead", self.num_predicted_steps_ahead, 1)
        if not self.goal_vector:
            raise check.InvalidParameter("goal_vector", "needs a weight per measurement", [])
        weights = self.future_measurements_weights
        if not weights or len(weights) > self.num_predicted_steps_ahead:
            raise check.InvalidParameter(
                "future_measurements_weights",
                f"needs 1 to num_predicted_steps_ahead ({self.num_predicted_steps_ahead}) weights",
                weights,
            )
        if self.evaluation_goal_vector is not None and len(self.evaluation_goal_vector) != len(
            self.goal_vector
        ):
            raise check.InvalidParameter(
                "evaluation_goal_vector",
                f"needs as many weights as goal_vector ({len(self.goal_vector)})",
                self.evaluation_goal_vector,
            )
        if self.target_scales is not None and (
            len(self.target_scales) != len(self.goal_vector) or min(self.target_scales) <= 0
        ):
            raise check.InvalidParameter(
                "target_scales", "needs a positive scale per measurement", self.target_scales
            )
        check.one_of("targets_after_episode_end", self.targets_after_episode_end, AFTER_END)


def dfp_network(conv: list[tuple[int, int, int]] | None = None) -> NetworkParameters:
    """DFP's network: the observation (through ``conv`` for images), the measurements and the
    goal, each through its own layers (leaky ReLU), concatenated, to the future
    measurements head."""
    return NetworkParameters(
        input_embedders={
            "observation": InputEmbedderParameters(
                conv=conv or [], scheme=[512] if conv else [128], activation="leaky_relu"
            ),
            MEASUREMENTS: InputEmbedderParameters(scheme=[128, 128, 128], activation="leaky_relu"),
            GOAL: InputEmbedderParameters(scheme=[128, 128, 128], activation="leaky_relu"),
        },
        middleware=MiddlewareParameters(scheme=[]),
        heads=[FutureMeasurementsHeadParameters()],
        learning_rate=1e-4,
    )


@dataclass(slots=True, kw_only=True)
class DFPAgentParameters(AgentParameters):
    """A DFP agent: e-greedy on goal-weighed predictions, a replay of steps with their future
    measurement changes, the prediction network ``main``."""

    algorithm: DFPAlgorithmParameters = field(default_factory=DFPAlgorithmParameters)
    """The algorithm's parameters."""
    exploration: ExplorationParameters | None = field(default_factory=EGreedyParameters)
    """E-greedy over the goal-weighed predictions."""
    memory: MemoryParameters | None = field(
        default_factory=lambda: ExperienceReplayParameters(max_size=20_000)
    )
    """The replay memory."""
    network_wrappers: dict[str, NetworkParameters] = field(
        default_factory=lambda: {"main": dfp_network()}
    )
    """The prediction network (``main``), reading the observation, ``measurements`` and
    ``goal``, with a `FutureMeasurementsHeadParameters` head named ``future``."""

    def validate(self) -> None:
        check.component("exploration", self.exploration, "EGreedyParameters()", optional=False)
        check.component("memory", self.memory, "ExperienceReplayParameters()", optional=False)
        check.keys("network_wrappers", self.network_wrappers, ("main",))
        heads = self.network_wrappers["main"].heads
        if not any(isinstance(h, FutureMeasurementsHeadParameters) for h in heads):
            raise check.InvalidParameter(
                "network_wrappers['main'].heads",
                "DFP's network needs a FutureMeasurementsHeadParameters() head",
                [type(h).__name__ for h in heads],
            )
        AgentParameters.validate(self)

    def agent_class(self) -> type[Agent]:
        return DFPAgent


def goal_weights(
    measurement_weights: list[float], offset_weights: list[float], num_offsets: int
) -> np.ndarray:
    """The goal over (offset, measurement), flat: each measurement's weight times its
    offset's (the last ``len(offset_weights)`` offsets; the others 0), float32."""
    offsets = np.zeros(num_offsets)
    offsets[num_offsets - len(offset_weights) :] = offset_weights
    return np.outer(offsets, measurement_weights).ravel().astype(np.float32)


class DFPAgent(HoldsEpisodes):
    """Direct Future Prediction: act on the predicted changes of the measurements."""

    params: DFPAgentParameters

    def __init__(
        self, params: DFPAgentParameters, observation_space: spaces.Dict, *args: Any, **kwargs: Any
    ) -> None:
        algorithm = params.algorithm
        if MEASUREMENTS not in observation_space.spaces:
            raise CoachError(
                f"DFP predicts the observation's {MEASUREMENTS!r}, which this environment does "
                f"not give (keys {sorted(observation_space.spaces)}); measure_return=True on "
                f"the environment's parameters makes the return so far one"
            )
        count = int(np.prod(observation_space[MEASUREMENTS].shape or ()))
        if len(algorithm.goal_vector) != count:
            raise CoachError(
                f"goal_vector has {len(algorithm.goal_vector)} weights, the environment "
                f"{count} measurements"
            )
        self.num_measurements = count
        self.size = count * algorithm.num_predicted_steps_ahead
        params = copy.deepcopy(params)  # the head's size follows the measurements
        for head in params.network_wrappers["main"].heads:
            if isinstance(head, FutureMeasurementsHeadParameters):
                head.size = self.size
        self.algorithm = algorithm = params.algorithm
        scales = algorithm.target_scales or [1.0] * count
        self.scales = np.asarray(scales, dtype=np.float64)
        self.goals: dict[str, torch.Tensor] = {}
        """The goal pursued in ``training`` and in ``evaluation``, (1, offsets * measurements)."""
        super().__init__(params, observation_space, *args, **kwargs)
        self.set_goal_vector(algorithm.goal_vector)
        self.set_goal_vector(algorithm.evaluation_goal_vector or algorithm.goal_vector, True)
        self.episodes_held = HeldEpisodes(self.num_envs, self._finish)
        """Each copy's open episode, until it ends."""

    # -- goals ------------------------------------------------------------------------------

    def set_goal_vector(self, weights: list[float], evaluation: bool = False) -> None:
        """Pursue ``weights`` (one per measurement) in training, or in evaluation."""
        if len(weights) != self.num_measurements:
            raise CoachError(
                f"a goal needs {self.num_measurements} weights (one per measurement), got "
                f"{len(weights)}"
            )
        algorithm = self.algorithm
        flat = goal_weights(
            list(weights), algorithm.future_measurements_weights, len(algorithm.offsets)
        )
        phase = "evaluation" if evaluation else "training"
        self.goals[phase] = torch.as_tensor(flat, device=self.device).unsqueeze(0)

    def goal_tensor(self) -> torch.Tensor:
        """The goal pursued now (1, offsets * measurements)."""
        return self.goals["evaluation" if self.phase is RunPhase.EVALUATE else "training"]

    def goal_inputs(self, rows: int) -> dict[str, torch.Tensor]:
        """The network's ``goal`` input for a batch of ``rows`` states: the goal pursued
        now, in every row."""
        return {GOAL: self.goal_tensor().expand(rows, -1)}

    def network_inputs(self) -> spaces.Dict:
        goal = spaces.Box(-np.inf, np.inf, shape=(self.size,), dtype=np.float32)
        return spaces.Dict({**self.observation_space.spaces, GOAL: goal})

    def action_values(self, outputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """Each action's predictions weighed by the current goal, (B, A)."""
        return (outputs["future"] * self.goal_tensor().unsqueeze(1)).sum(dim=-1)

    # -- the sides --------------------------------------------------------------------------

    def make_policy(self) -> Policy:
        # E-greedy on the goal-weighed predictions: the Q policy's acting on action values,
        # the network reading the current goal beside every batch of states.
        policy = QPolicy(
            self.networks["main"],
            self.action_values,
            further_inputs=self.goal_inputs,
            **self.policy_arguments(),
        )
        policy.not_exportable = "its network also reads the goal, which is no observation"
        return policy

    def make_learner(self) -> Learner:
        return DFPLearner(agent=self, **self.learner_arguments())

    def memory_extras(self) -> dict[str, spaces.Space]:
        size = self.size
        return {FUTURE: spaces.Box(-np.inf, np.inf, shape=(size,), dtype=np.float32)}

    # -- storing: a whole episode at a time (`HoldsEpisodes`) ------------------------------

    def _finish(self, episode: Transition) -> dict[str, np.ndarray]:
        count = len(episode.reward)
        measured = np.concatenate(
            [
                np.reshape(episode.state[MEASUREMENTS], (count, -1)),
                np.reshape(episode.next_state[MEASUREMENTS][-1:], (1, -1)),
            ]
        )
        targets = future_targets(
            measured,
            self.algorithm.offsets,
            self.scales,
            bool(episode.terminated[-1]),
            self.algorithm.targets_after_episode_end,
        )
        return {FUTURE: targets}

    # -- checkpoints ------------------------------------------------------------------------

    def state_dict(self, include_memory: bool = False) -> dict[str, Any]:
        return {
            **super().state_dict(include_memory),
            "goals": {phase: goal.cpu() for phase, goal in self.goals.items()},
        }

    def load_state_dict(self, state: dict[str, Any], episodes_in_flight: bool = True) -> None:
        super().load_state_dict(state, episodes_in_flight)
        self.goals = {phase: goal.to(self.device) for phase, goal in state["goals"].items()}


class DFPLearner(Learner):
    """DFP's update: the taken action's predictions regressed on the known targets.

    Args:
        agent: The agent (its training goal).
        **kwargs: `Learner`'s arguments.
    """

    def __init__(self, agent: DFPAgent, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.agent = agent
        self.network = self.networks["main"]

    def learn(self, batch: Batch) -> dict[str, float | torch.Tensor]:
        b = on_device(batch, self.device)
        rows = len(b.rewards)
        inputs = {**b.states, GOAL: self.agent.goals["training"].expand(rows, -1)}
        predicted = self.network(inputs)["future"]
        actions = b.actions.long() - first_action(self.action_space)
        taken = predicted[torch.arange(rows, device=self.device), actions]
        target = b.extras[FUTURE]
        known = ~torch.isnan(target)
        errors = torch.where(known, taken - torch.nan_to_num(target), 0.0)
        loss = errors.square().sum(dim=1).mean()
        self.network.train_step(loss)
        return {"loss": loss.detach(), "known_targets": known.float().mean()}


__all__ = [
    "DFPAgent",
    "DFPAgentParameters",
    "DFPAlgorithmParameters",
    "DFPLearner",
    "dfp_network",
    "goal_weights",
]
