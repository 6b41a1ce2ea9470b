"""An agent's acting side: its policy, from (filtered) states to actions.

A `Policy` holds what acting needs and nothing of learning: the networks it reads (online
weights only), the exploration, the per-copy acting state (the hidden states of recurrent
networks, `coach.agents.hidden_state`), and whether it logs its behaviour for a dataset
being recorded. Agents compose one (`Agent.policy`) with their learning code; rollout
workers, evaluation and dataset recording drive the policy alone, through `Policy.act`.
Beside the base are the policies that agents of several algorithms act with: on action
values (`QPolicy`) and with a deterministic actor (`DeterministicPolicy`); a policy of one
algorithm's own lives in its module.

Heatup acts uniformly at random for every policy, in blocks drawn at once (one draw per
step would cost more than the step of a cheap environment); where the observations carry an
action mask (`coach.core.action_masks`), uniformly among each row's legal actions.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from coach.agents.hidden_state import HiddenStates
from coach.agents.learning import cpu_tensor
from coach.core.action_masks import (
    ACTION_MASK,
    has_action_mask,
    legal_actions,
    legal_probabilities,
    legal_random_actions,
    masked_values,
)
from coach.core.run_phase import HEATUP, TRAIN, RunPhase
from coach.core.types import ActionInfo, Observation
from coach.errors import CoachError
from coach.exploration.exploration_policy import ExplorationPolicy, random_actions
from coach.exploration.parameter_noise import ParameterNoise
from coach.networks.network_wrapper import NetworkWrapper

RANDOM_BLOCK = 1024
"""Steps of random actions drawn at once in heatup."""


class Policy(ABC):
    """The acting side of an agent.

    Args:
        action_space: The agent's action space (before its output filter).
        num_envs: How many environment copies it acts in at once.
        rng: The agent's numpy generator (heatup's random actions).
        torch_generator: The agent's torch generator, on the agent's device (sampling).
        device: The device of the networks the policy reads.
        exploration: The exploration policy, if the agent has one.
        networks: The agent's networks by name: the recurrent ones carry a hidden state per
            copy (`hidden`).
        observation_space: The agent's (filtered) observation space: whether its states
            carry an action mask.

    Raises:
        CoachError: The observations carry an action mask that does not fit the action
            space (`coach.core.action_masks.has_action_mask`).
    """

    def __init__(
        self,
        action_space: spaces.Space,
        num_envs: int,
        rng: np.random.Generator,
        torch_generator: torch.Generator,
        device: torch.device,
        exploration: ExplorationPolicy | None = None,
        networks: dict[str, NetworkWrapper] | None = None,
        observation_space: spaces.Dict | None = None,
    ) -> None:
        self.action_space = action_space
        self.action_mask = has_action_mask(observation_space, action_space)
        """The states carry an action mask (`ACTION_MASK`): acting picks legal actions only.
        Decided once, so that acting without one costs nothing more."""
        self.num_envs = num_envs
        self.rng = rng
        self.torch_generator = torch_generator
        self.device = device
        self.on_cpu = device.type == "cpu"
        self.exploration = exploration
        self.explore = True
        """False while the level above tests a subgoal: act without exploration (HAC)."""
        self.log_behaviour = False
        """Give each action's probability with it (`ActionInfo.extras`): a dataset is being
        recorded (`coach.batch.recording`)."""
        self.hidden = HiddenStates(networks or {}, num_envs)
        """The hidden states of the recurrent networks, per copy (empty: feed-forward)."""
        self.recurrent = bool(self.hidden)
        """There are hidden states: what every step asks, as a plain attribute."""
        self._random_block: np.ndarray = np.empty(0)
        self._random_cursor = 0
        self.not_exportable: str | None = None
        """Why this policy cannot be exported as a function of one observation, if it cannot
        (`coach.export.policy`)."""
        self.perturbation = exploration if isinstance(exploration, ParameterNoise) else None
        """Parameter noise: in training, `outputs` reads its perturbed network."""
        self.perturbs = False
        """The decision under way reads the perturbed network."""

    def act(
        self, state: Observation, phase: RunPhase, rows: np.ndarray | None = None
    ) -> ActionInfo:
        """The actions for a batch of (filtered) states: uniform at random in heatup, the
        policy's own (with exploration in training) otherwise. Recurrent networks step
        their hidden states either way, and the step stores them (`HiddenStates.advance`).

        ``state`` holds every copy's state, or with ``rows`` those of the copies ``rows``:
        their hidden states step, the others' wait."""
        recurrent = self.recurrent
        if recurrent:
            self.hidden.select(rows)
        if self.exploration is not None:
            self.exploration.rows = rows
        self.perturbs = self.perturbation is not None and phase is TRAIN and self.explore
        if phase is HEATUP:
            info = ActionInfo(self.random_actions(state, rows))
            if self.action_mask and self.log_behaviour:  # uniform among the legal actions
                legal = legal_actions(state[ACTION_MASK])
                info.extras["action_probabilities"] = legal_probabilities(legal)
            if recurrent:
                self.hidden.run_all(self.tensors(state))
        else:
            try:
                info = self.decide(state, phase)
            finally:
                self.perturbs = False
        if recurrent:
            info.memory_extras.update(self.hidden.advance())
        return info

    @abstractmethod
    def decide(self, state: Observation, phase: RunPhase) -> ActionInfo:
        """The policy's actions in training (exploring) or evaluation (greedy)."""

    def greedy(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """The actions `decide` takes in evaluation for a batch of state tensors, as one torch
        function of them: the action of highest value or probability, or the mean action,
        without the exploration's evaluation randomness (an evaluation epsilon or noise).
        What ``coach export`` writes as a file (`coach.export`); a feed-forward policy's
        alone: a recurrent one carries hidden states that this function does not take.

        Raises:
            CoachError: the policy has no such function.
        """
        raise CoachError(f"{type(self).__name__} has no greedy action to export")

    def outputs(
        self, network: NetworkWrapper, inputs: dict[str, torch.Tensor]
    ) -> dict[str, torch.Tensor]:
        """A network's outputs for a batch of states, as `decide` reads them: a recurrent
        network's from the copies' hidden states (`HiddenStates.run`), a perturbed copy's
        in training with parameter noise."""
        if network.recurrent:
            if self.perturbs:
                raise CoachError("parameter noise perturbs feed-forward networks only")
            return self.hidden.run(network, inputs)
        if self.perturbs:
            assert self.perturbation is not None
            return self.perturbation.outputs(network, inputs)
        outputs: dict[str, torch.Tensor] = network(inputs)
        return outputs

    def tensors(self, observation: Observation) -> dict[str, torch.Tensor]:
        """A batch of observations as tensors on the policy's device (on the CPU sharing the
        arrays' memory, `cpu_tensor`: acting reads them at once and keeps nothing)."""
        if self.on_cpu:
            return {k: cpu_tensor(v) for k, v in observation.items()}
        return {k: torch.as_tensor(v, device=self.device) for k, v in observation.items()}

    def random_actions(self, state: Observation, rows: np.ndarray | None = None) -> np.ndarray:
        """Uniform random actions for the copies of ``state``: every copy's, drawn in
        blocks, or those of the copies ``rows``; with an action mask, uniform among each
        row's legal actions."""
        if self.action_mask:
            assert isinstance(self.action_space, spaces.Discrete)  # has_action_mask checked
            return legal_random_actions(state[ACTION_MASK], self.rng) + int(self.action_space.start)
        if rows is not None:
            return random_actions(self.action_space, len(rows), self.rng)
        if self._random_cursor >= len(self._random_block):
            block = random_actions(self.action_space, RANDOM_BLOCK * self.num_envs, self.rng)
            self._random_block = block.reshape(RANDOM_BLOCK, self.num_envs, *block.shape[1:])
            self._random_cursor = 0
        self._random_cursor += 1
        return self._random_block[self._random_cursor - 1]

    def episodes_ended(self, done: np.ndarray) -> None:
        """The episodes of the copies in ``done`` ended (per-episode exploration restarts)."""
        if self.exploration is not None:
            self.exploration.episode_ended(done)

    def episodes_started(self, copies: np.ndarray) -> None:
        """Episodes begin in the copies ``copies`` (a (B,) mask): their hidden states are
        zeroed before their next step."""
        if self.hidden:
            self.hidden.start(copies)

    def state_dict(self) -> dict[str, Any]:
        """The exploration's state, heatup's random block and the hidden states, for
        checkpoints."""
        return {
            "exploration": self.exploration.state_dict() if self.exploration else {},
            "random_block": self._random_block,
            "random_cursor": self._random_cursor,
            "hidden": self.hidden.state_dict() if self.hidden else None,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what `state_dict` returned."""
        if self.exploration is not None:
            self.exploration.load_state_dict(state["exploration"])
        self._random_block = state["random_block"]
        self._random_cursor = int(state["random_cursor"])
        if self.hidden:
            self.hidden.load_state_dict(state["hidden"])


QValues = Callable[[dict[str, torch.Tensor]], torch.Tensor]
"""Q-values (B, A) from a Q network's outputs."""
Constraint = Callable[[torch.Tensor, dict[str, torch.Tensor]], torch.Tensor]
"""The values the policy may pick from, given Q-values (B, A) and the states: fewer actions
(-inf) for a batch-constrained agent."""
FurtherInputs = Callable[[int], dict[str, torch.Tensor]]
"""Network inputs that are no part of the states, for a batch of so many of them (DFP's
goal)."""


class QPolicy(Policy):
    """Acts on a Q network's values through the exploration policy (e-greedy, Boltzmann,
    UCB or bootstrapped heads). Where the states carry an action mask, the illegal actions'
    values are -inf (in every head of an ensemble) before the exploration sees them, and the
    exploration picks its random actions among the finite ones (`ExplorationPolicy.masked`).

    Args:
        network: The Q network (its online weights).
        q_values: Q-values from the network's outputs: the outputs' ``q``, the mean of a
            return distribution (C51, QR-DQN), or every head's (an ensemble, (B, K, A)).
        constraint: Rules actions out of the choice (BCQ), if given.
        ensemble: The values are per head (B, K, A): the exploration picks a head, and the
            action record carries their mean.
        further_inputs: What the network reads beside the states (DFP's goal, weighing
            its predictions into values), if anything.
        **kwargs: `Policy`'s arguments; an exploration policy is required.
    """

    def __init__(
        self,
        network: NetworkWrapper,
        q_values: QValues,
        constraint: Constraint | None = None,
        ensemble: bool = False,
        further_inputs: FurtherInputs | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        assert self.exploration is not None, "a Q policy acts through its exploration"
        self.network = network
        self.q_values = q_values
        self.constraint = constraint
        self.ensemble = ensemble
        self.further_inputs = further_inputs
        self.noisy = network.online.reset_noise(self.torch_generator)
        """Noisy layers (Fortunato et al., 2018) draw new noise before every decision."""
        if self.action_mask:  # `values` gives it -inf for the illegal actions
            self.exploration.masked = True

    def values(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """The values the policy picks from, for a batch of states (no gradient): -inf for
        the actions a constraint or the action mask rules out."""
        if self.further_inputs is not None:
            rows = len(next(iter(inputs.values())))
            inputs = {**inputs, **self.further_inputs(rows)}
        with torch.no_grad():
            values = self.q_values(self.outputs(self.network, inputs))
            if self.constraint is not None:
                values = self.constraint(values, inputs)
            if self.action_mask:
                mask = inputs[ACTION_MASK]
                # An ensemble's values are per head, (B, K, A): the mask holds for every head.
                values = masked_values(values, mask[:, None] if self.ensemble else mask, -np.inf)
            return values

    def decide(self, state: Observation, phase: RunPhase) -> ActionInfo:
        exploration = self.exploration
        assert exploration is not None
        if self.noisy:
            self.network.online.reset_noise(self.torch_generator)
        values = self.values(self.tensors(state)).cpu().numpy()
        extras = {}
        if self.log_behaviour and not self.ensemble:  # before get_action moves the clock on
            extras["action_probabilities"] = exploration.action_probabilities(values, phase)
        action = exploration.get_action(values, phase)
        summary = values.mean(axis=1) if self.ensemble else values
        return ActionInfo(action=action, action_values=summary, extras=extras)

    def greedy(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        if self.noisy:
            raise CoachError(
                "a noisy network draws new weights before every decision, evaluation's too: "
                "its actions are no function of the observation alone"
            )
        values = self.values(inputs)
        if self.ensemble:  # every exploration over heads evaluates with their mean
            values = values.mean(dim=1)
        assert isinstance(self.action_space, spaces.Discrete)
        return values.argmax(dim=1) + int(self.action_space.start)


class DeterministicPolicy(Policy):
    """Acts with a deterministic actor's actions, with the exploration's noise in training
    (none while the level above tests a subgoal): how DDPG, TD3 and HAC's levels act, and
    NAF with its ``mu(s)``.

    Args:
        actor: The actor network (a ``policy`` head).
        **kwargs: `Policy`'s arguments.
    """

    def __init__(self, actor: NetworkWrapper, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.actor = actor

    def actions(self, state: Observation) -> np.ndarray:
        """The actor's actions for a batch of states, before exploration."""
        with torch.no_grad():
            return self.outputs(self.actor, self.tensors(state))["policy"].cpu().numpy()

    def decide(self, state: Observation, phase: RunPhase) -> ActionInfo:
        actions = self.actions(state)
        if self.exploration is not None:
            actions = self.exploration.get_action(
                actions, phase if self.explore else RunPhase.EVALUATE
            )
        return ActionInfo(action=actions.astype(self.action_space.dtype, copy=False))

    def greedy(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        actions: torch.Tensor = self.actor(inputs)["policy"]
        bounds = self.exploration.evaluation_bounds() if self.exploration is not None else None
        if bounds is None:
            return actions
        # As the exploration clips (in float64, then back to the action's dtype).
        low, high = (torch.as_tensor(b, dtype=torch.float64, device=self.device) for b in bounds)
        return torch.clamp(actions.double(), low, high).to(actions.dtype)


def action_bounds(
    space: spaces.Space, device: torch.device, who: str
) -> tuple[torch.Tensor, torch.Tensor]:
    """A 1-d Box's low and high bounds as tensors on ``device``; an error naming ``who``
    needs them for any other space."""
    if not isinstance(space, spaces.Box) or len(space.shape) != 1:
        raise CoachError(
            f"{who} needs a 1-d Box action space, got {space}; a discrete environment needs a "
            f"discrete agent"
        )
    low = torch.as_tensor(space.low, dtype=torch.float32, device=device)
    return low, torch.as_tensor(space.high, dtype=torch.float32, device=device)
