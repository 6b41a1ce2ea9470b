"""Actor-critic with experience replay, ACER (Wang et al., 2017, "Sample Efficient
Actor-Critic with Experience Replay"), for discrete actions.

One network answers the policy's logits (``policy``) and a Q-value per action (``q``) on a
shared torso; the agent acts by sampling pi and keeps mu(.|s), the probabilities it acted
with, beside every step. It learns from each full T x B rollout block on-policy, then
keeps the block's columns as segments in a replay (`coach.memories.acer_replay`) and takes
``ratio_of_replay`` off-policy updates (a Poisson number, by default) on segments drawn from
it. Every update, on- or off-policy, is the same, on time-major segments (T, N)
(`coach.agents.acer_learning`):

- Retrace targets, backward over each segment, with rho_bar = min(1, pi(a|s) / mu(a|s)):
  ``Q_ret_t = r_t + gamma (rho_bar_{t+1} (Q_ret_{t+1} - Q(s_{t+1}, a_{t+1})) + V(s_{t+1}))``,
  ``V = sum_a pi(a) Q(s, a)``; after a segment's last step, and after a step a time limit
  (or a restart) cut, from V of the step's own next state; after a terminal step, from 0.
- The policy's gradient with truncated importance weights and the bias correction,
  ``min(c, rho(a_t)) grad log pi(a_t) (Q_ret - V) + sum_a [1 - c / rho(a)]_+ pi(a)
  grad log pi(a) (Q(s, a) - V)``, plus ``beta_entropy`` times the entropy's.
- The efficient trust region: the gradient ``g`` with respect to the policy's
  probabilities phi is projected, row by row, to ``z = g - max(0, (k^T g - delta) /
  ||k||^2) k``, ``k = -pi_avg / pi`` the gradient of KL(pi_avg || pi); z is what flows
  back into the network. The average network (pi_avg) is the network's target copy,
  moved ``1 - avg_network_decay`` of the way to the online weights after every update.
- The Q head regressed on Q_ret (squared error), through the same torso.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from coach.agents.acer_learning import ACERAlgorithmParameters, ACERLearner
from coach.agents.acting import Policy
from coach.agents.agent import Agent
from coach.agents.learning import Learner, round_mean
from coach.agents.parameters import AgentParameters
from coach.core.action_masks import legal_only
from coach.core.run_phase import RunPhase
from coach.core.spaces import first_action
from coach.core.types import ActionInfo, Observation, Transition
from coach.errors import CoachError
from coach.memories.acer_replay import ACERReplay, ACERReplayParameters
from coach.memories.memory import MemoryParameters
from coach.networks.distributions import CategoricalDistribution
from coach.networks.heads import CategoricalPolicyHeadParameters, QHeadParameters
from coach.networks.network_wrapper import NetworkWrapper
from coach.networks.parameters import MiddlewareParameters, NetworkParameters
from coach.validation import InvalidParameter


def acer_network(scheme: list[int], learning_rate: float) -> NetworkParameters:
    """An ACER network: an MLP torso with a ``policy`` (logits) and a ``q`` head, Adam with
    the gradient norm clipped at 40 (the original Coach's), and a target copy that is the
    average policy network."""
    return NetworkParameters(
        middleware=MiddlewareParameters(scheme=list(scheme)),
        heads=[CategoricalPolicyHeadParameters(), QHeadParameters()],
        learning_rate=learning_rate,
        gradient_clip_norm=40.0,
        create_target_network=True,
    )


@dataclass(slots=True, kw_only=True)
class ACERAgentParameters(AgentParameters):
    """An ACER agent: blocks of 5 steps per env copy, 4 off-policy updates per block on
    average once the replay holds 10,000 steps, one network of 256 units with the ``policy``
    and ``q`` heads and its average copy, Adam at 1e-4."""

    algorithm: ACERAlgorithmParameters = field(default_factory=ACERAlgorithmParameters)
    """The algorithm's parameters."""
    memory: MemoryParameters | None = field(default_factory=ACERReplayParameters)
    """The rollout block and the replay of its segments."""
    network_wrappers: dict[str, NetworkParameters] = field(
        default_factory=lambda: {"main": acer_network([256], 1e-4)}
    )
    """The ACER network (``main``), its target copy the average network."""

    def validate(self) -> None:
        AgentParameters.validate(self)
        if not isinstance(self.memory, ACERReplayParameters):
            raise InvalidParameter(
                "memory",
                "must be ACERReplayParameters (ACER replays its blocks' segments)",
                self.memory,
            )
        main = self.network_wrappers.get("main")
        heads = {head.name for head in main.heads} if main is not None else set()
        if main is None or not {"policy", "q"} <= heads or not main.create_target_network:
            raise InvalidParameter(
                "network_wrappers.main",
                "must have a 'policy' and a 'q' head and a target copy, the average policy "
                "network (coach.agents.acer.acer_network builds one)",
                main,
            )

    def agent_class(self) -> type[ACERAgent]:
        return ACERAgent


class ACERPolicy(Policy):
    """Acts by sampling pi (its most probable action in evaluation) and keeps pi's
    probabilities with each step as mu, the behaviour policy's (``memory_extras``).

    Args:
        network: The ACER network (its ``policy`` head).
        **kwargs: `Policy`'s arguments.
    """

    def __init__(self, network: NetworkWrapper, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.network = network
        self.offset = first_action(self.action_space)

    def distribution(self, inputs: dict[str, torch.Tensor]) -> CategoricalDistribution:
        """pi for a batch of states, over the legal actions where they carry a mask."""
        return CategoricalDistribution(legal_only(self.network(inputs)["policy"], inputs))

    def decide(self, state: Observation, phase: RunPhase) -> ActionInfo:
        with torch.no_grad():
            pi = self.distribution(self.tensors(state))
            if phase is RunPhase.EVALUATE:
                return ActionInfo(action=pi.mode().cpu().numpy() + self.offset)
            action = pi.sample(self.torch_generator).cpu().numpy() + self.offset
            mu = pi.log_probs.exp().cpu().numpy()
        info = ActionInfo(action=action, memory_extras={"mu": mu})
        if self.log_behaviour:  # a dataset is being recorded
            info.extras["action_probabilities"] = mu
        return info

    def greedy(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.distribution(inputs).mode() + self.offset


class ACERAgent(Agent):
    """Collects blocks with pi, learns from each full one on-policy and then from its
    replayed segments (`train`)."""

    params: ACERAgentParameters

    def memory_extras(self) -> dict[str, spaces.Space]:
        if not isinstance(self.action_space, spaces.Discrete):
            raise CoachError(f"ACER needs a Discrete action space, got {self.action_space}")
        actions = int(self.action_space.n)
        return {"mu": spaces.Box(0.0, 1.0, shape=(actions,), dtype=np.float32)}

    def make_policy(self) -> Policy:
        return ACERPolicy(self.networks["main"], **self.policy_arguments())

    def make_learner(self) -> Learner:
        return ACERLearner(self.params.algorithm, **self.learner_arguments())

    @property
    def replay(self) -> ACERReplay | None:
        """The block and the replay: the agent's memory, in a learning agent; ``None`` in an
        acting-only one (a rollout worker's stores its steps for the learner instead)."""
        return self.memory if isinstance(self.memory, ACERReplay) else None

    def store(self, step: Transition, info: ActionInfo, rows: np.ndarray | None = None) -> None:
        # Heatup's random steps carry no mu: only the policy's own steps are kept.
        if self.phase is RunPhase.TRAIN:
            super().store(step, info, rows)

    def end_episodes(self) -> None:
        # The episodes in the block stop here: Retrace bootstraps from their last steps.
        if self.replay is not None:
            self.replay.cut()
        super().end_episodes()

    def train(self) -> int:
        """On a full block: one on-policy update on it, then (once the replay holds enough
        steps) a Poisson number of off-policy updates on replayed segments."""
        learner = self.learner
        replay = self.replay
        if self.phase is not RunPhase.TRAIN or learner is None or replay is None or not replay.full:
            return 0
        algorithm = self.params.algorithm
        self.follow_learning_rate()
        updates = [learner.learn(replay.block_segments())]
        replay.retire_block()
        if replay.replayed_steps >= max(algorithm.num_transitions_to_start_replay, 1):
            ratio = algorithm.ratio_of_replay
            for _ in range(self.rng.poisson(ratio) if algorithm.poisson_replay else ratio):
                updates.append(learner.learn(replay.sample(algorithm.batch_size)))
        self.training_rounds += 1
        self.training_steps += len(updates)
        for name in updates[0]:
            self.log.scalar(f"Loss/{name}", round_mean([losses[name] for losses in updates]))
        return len(updates)

    def state_dict(self, include_memory: bool = False) -> dict[str, Any]:
        # The block in progress is small and part of the policy's data: always kept.
        state = super().state_dict(include_memory)
        state["block"] = self.replay.block.state_dict() if self.replay is not None else None
        return state

    def load_state_dict(self, state: dict[str, Any], episodes_in_flight: bool = True) -> None:
        super().load_state_dict(state, episodes_in_flight)
        if self.replay is not None and state.get("block") is not None:
            self.replay.block.load_state_dict(state["block"])
