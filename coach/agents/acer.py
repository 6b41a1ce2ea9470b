"""Actor-critic with experience replay, ACER (Wang et al., 2017, "Sample Efficient
Actor-Critic with Experience Replay"), for discrete actions.

One network answers the policy's logits (``policy``) and a Q-value per action (``q``) on a
shared torso; the agent acts by sampling pi and keeps mu(.|s), the probabilities it acted
with, beside every step. It learns from each full T x B rollout block on-policy, then
keeps the block's columns as segments in a replay (`coach.memories.acer_replay`) and takes
``ratio_of_replay`` off-policy updates (a Poisson number, by default) on segments drawn from
it. Every update, on- or off-policy, is the same, on time-major segments (T, N):

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

from coach import validation as check
from coach.agents.acting import Policy
from coach.agents.agent import Agent
from coach.agents.algorithm import AlgorithmParameters
from coach.agents.learning import Learner, on_device, round_mean
from coach.agents.parameters import AgentParameters
from coach.core.action_masks import legal_only
from coach.core.run_phase import RunPhase
from coach.core.spaces import first_action
from coach.core.types import ActionInfo, Batch, Observation, Transition
from coach.errors import CoachError
from coach.memories.acer_replay import ACERReplay, ACERReplayParameters
from coach.memories.memory import MemoryParameters
from coach.networks.distributions import CategoricalDistribution
from coach.networks.heads import CategoricalPolicyHeadParameters, QHeadParameters
from coach.networks.network_wrapper import NetworkWrapper
from coach.networks.parameters import MiddlewareParameters, NetworkParameters
from coach.validation import InvalidParameter

EPS = 1e-6
"""Keeps divisions by probabilities and their logarithms finite."""


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
class ACERAlgorithmParameters(AlgorithmParameters):
    """ACER's algorithm parameters. It learns once per full block (the memory's
    ``segment_length`` steps of every env copy): ``num_consecutive_playing_steps`` and
    ``num_consecutive_training_steps`` are not used."""

    batch_size: int = 16
    """Segments per off-policy update."""
    ratio_of_replay: int = 4
    """Off-policy updates per on-policy one: the mean of a Poisson number, or the number."""
    poisson_replay: bool = True
    """Draw the number of off-policy updates after each block from Poisson(ratio_of_replay),
    as the paper and the original Coach do; else take exactly ``ratio_of_replay``."""
    num_transitions_to_start_replay: int = 10_000
    """Steps the replay holds before the off-policy updates start (on-policy ones only
    until then)."""
    importance_weight_truncation: float = 10.0
    """c, the truncation of the importance weights in the policy gradient (Retrace truncates
    at 1)."""
    trust_region: bool = True
    """Project the policy's gradient into the trust region around the average policy."""
    max_KL_divergence: float = 1.0
    """delta, the bound of the linearised KL(pi_avg || pi) change per update."""
    avg_network_decay: float = 0.99
    """alpha: the average network keeps this much of itself at every update (the original
    Coach's ``rate_for_copying_weights_to_target`` is 1 minus it)."""
    beta_entropy: float = 0.01
    """Weight of the entropy bonus."""
    q_loss_weight: float = 0.5
    """Weight of the Q head's squared error to Q_ret (0.5: the paper's (Q_ret - Q) grad Q)."""
    bootstrap_from_average: bool = False
    """Retrace with the average network's Q-values (Q(s, a) and V(s) = sum pi Q in the
    recursion and the bootstraps), as a target network; the paper's are the network's own."""

    def validate(self) -> None:
        AlgorithmParameters.validate(self)
        check.whole("ratio_of_replay", self.ratio_of_replay, 0, why="0: on-policy only")
        check.whole("num_transitions_to_start_replay", self.num_transitions_to_start_replay, 0)
        check.number("importance_weight_truncation", self.importance_weight_truncation, 0,
                     low_open=True)  # fmt: skip
        check.number("max_KL_divergence", self.max_KL_divergence, 0)
        check.number("avg_network_decay", self.avg_network_decay, 0, 1)
        check.number("beta_entropy", self.beta_entropy)
        check.number("q_loss_weight", self.q_loss_weight, 0)


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
                "memory", "must be ACERReplayParameters (ACER replays its blocks' segments)",
                self.memory,
            )  # fmt: skip
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
        learner, replay = self.learner, self.replay
        if self.phase is not RunPhase.TRAIN or learner is None or replay is None or not replay.full:
            return 0
        algorithm = self.params.algorithm
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


def retrace_targets(
    rewards: torch.Tensor,
    q_taken: torch.Tensor,
    values: torch.Tensor,
    truncated_ratios: torch.Tensor,
    ended: torch.Tensor,
    successor_values: torch.Tensor,
    discount: float,
) -> torch.Tensor:
    """Q_ret of every step of segments, backward over each, (T, N).

    Args:
        rewards: (T, N) r_t.
        q_taken: (T, N) Q(s_t, a_t).
        values: (T, N) V(s_t).
        truncated_ratios: (T, N) rho_bar_t = min(1, pi(a_t|s_t) / mu(a_t|s_t)).
        ended: (T, N) the step ended its episode (terminated or truncated): Q_ret starts
            afresh from its successor value there.
        successor_values: (T, N) what Q_ret starts from after a segment's last step and
            after the steps that ended an episode: V of the step's own next state, 0 after
            a terminal one (other cells are not read).
        discount: gamma.
    """
    q_ret = torch.empty_like(rewards)
    following = successor_values[-1]
    for t in reversed(range(len(rewards))):
        if t < len(rewards) - 1:
            chained = truncated_ratios[t + 1] * (q_ret[t + 1] - q_taken[t + 1]) + values[t + 1]
            following = torch.where(ended[t], successor_values[t], chained)
        q_ret[t] = rewards[t] + discount * following
    return q_ret


def bias_correction_weights(rho: torch.Tensor, pi: torch.Tensor, c: float) -> torch.Tensor:
    """``[1 - c / rho(a)]_+ pi(a)`` of every action, (N, A): the weight of the correction
    term where the truncation at c cut rho(a) = pi(a) / mu(a)."""
    return (1.0 - c / (rho + EPS)).clamp(min=0.0) * pi


def policy_gain(
    phi: torch.Tensor,
    actions: torch.Tensor,
    rho: torch.Tensor,
    q_ret: torch.Tensor,
    q_values: torch.Tensor,
    values: torch.Tensor,
    c: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """ACER's policy objective per row, as a function of the probabilities ``phi`` (N, A)
    (its gradient is the paper's g): the truncated importance-weighted term
    ``min(c, rho(a)) log phi(a) (Q_ret - V)`` of the actions taken (N, 1), and the bias
    correction ``sum_a [1 - c / rho(a)]_+ pi(a) log phi(a) (Q(s, a) - V)`` (the others are
    constants: rho (N, A), Q_ret (N,), Q-values (N, A), V (N,))."""
    log_phi = torch.log(phi + EPS)
    rho_taken = rho.gather(1, actions).squeeze(1)
    truncated = rho_taken.clamp(max=c) * log_phi.gather(1, actions).squeeze(1) * (q_ret - values)
    weights = bias_correction_weights(rho, phi.detach(), c)
    correction = (weights * log_phi * (q_values - values[:, None])).sum(1)
    return truncated, correction


def trust_region_step(g: torch.Tensor, k: torch.Tensor, delta: float) -> torch.Tensor:
    """``z = g - max(0, (k^T g - delta) / ||k||^2) k``, row by row (N, A): the step closest
    to g whose linearised KL change k^T z stays within delta."""
    excess = ((k * g).sum(1) - delta).clamp(min=0.0) / ((k * k).sum(1) + EPS)
    return g - excess[:, None] * k


class ACERLearner(Learner):
    """ACER's update on a batch of time-major segments (T, N): Retrace targets, the
    truncated policy gradient with bias correction projected into the trust region, the Q
    regression, then the average network's move.

    Args:
        algorithm: ACER's parameters.
        **kwargs: `Learner`'s arguments.
    """

    def __init__(self, algorithm: ACERAlgorithmParameters, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.algorithm = algorithm
        self.network = self.networks["main"]
        self.offset = first_action(self.action_space)

    def learn(self, batch: Batch) -> dict[str, float | torch.Tensor]:
        algorithm, c = self.algorithm, self.algorithm.importance_weight_truncation
        b = on_device(batch, self.device)
        steps, count = b.rewards.shape
        states = {k: v.flatten(0, 1) for k, v in b.states.items()}
        actions = (b.actions.flatten(0, 1).long() - self.offset)[:, None]
        outputs = self.network(states)
        probs = torch.softmax(legal_only(outputs["policy"], states), dim=1)
        q = outputs["q"]
        with torch.no_grad():
            pi, q_values = probs.detach(), q.detach()
            values = (pi * q_values).sum(1)
            rho = pi / (b.extras["mu"].flatten(0, 1) + EPS)
            average = self.network.target_predict(states)
            critic = average["q"] if algorithm.bootstrap_from_average else q_values
            q_ret = retrace_targets(
                b.rewards, critic.gather(1, actions).view(steps, count),
                (pi * critic).sum(1).view(steps, count),
                rho.gather(1, actions).clamp(max=1.0).view(steps, count),
                b.terminated | b.truncated, self.successor_values(b), algorithm.discount,
            ).flatten()  # fmt: skip
            average_pi = torch.softmax(legal_only(average["policy"], states), dim=1)
        # g: the gradient of each row's objective with respect to its probabilities.
        phi = pi.clone().requires_grad_()
        truncated, correction = policy_gain(phi, actions, rho, q_ret, q_values, values, c)
        entropy = -(phi * torch.log(phi + EPS)).sum(1)
        gain = truncated + correction + algorithm.beta_entropy * entropy
        (g,) = torch.autograd.grad(gain.sum(), phi)
        z = g
        if algorithm.trust_region:  # k = -pi_avg / pi, the gradient of KL(pi_avg || pi)
            z = trust_region_step(g, -average_pi / (pi + EPS), algorithm.max_KL_divergence)
        q_loss = (q.gather(1, actions).squeeze(1) - q_ret).square().mean()
        # The surrogate's gradient with respect to the probabilities is -z / N: z flows back
        # through the network, the Q error's gradient beside it.
        self.network.train_step(-(probs * z).sum(1).mean() + algorithm.q_loss_weight * q_loss)
        self.network.update_target(1.0 - algorithm.avg_network_decay)
        kl = (average_pi * (torch.log(average_pi + EPS) - torch.log(pi + EPS))).sum(1)
        return {
            "policy_loss": -truncated.detach().mean(),
            "bias_correction_loss": -correction.detach().mean(),
            "q_loss": q_loss.detach(),
            "entropy": entropy.detach().mean(),
            "kl_divergence": kl.mean(),
            "v_mean": values.mean(),
        }

    @torch.no_grad()
    def successor_values(self, b: Batch) -> torch.Tensor:
        """V of the next states Retrace starts from, (T, N): those of each segment's last
        step and of the steps a time limit or a restart cut (0 elsewhere, and after a
        terminal step)."""
        own = b.truncated.clone()
        own[-1] = True
        own &= ~b.terminated
        values = torch.zeros_like(b.rewards)
        t, n = torch.nonzero(own, as_tuple=True)
        if len(t):
            states = {k: v[t, n] for k, v in b.next_states.items()}
            outputs = self.network(states)
            pi = torch.softmax(legal_only(outputs["policy"], states), dim=1)
            average = self.algorithm.bootstrap_from_average
            q = self.network.target_predict(states)["q"] if average else outputs["q"]
            values[t, n] = (pi * q).sum(1)
        return values
