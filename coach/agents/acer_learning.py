"""ACER's learning side (Wang et al., 2017; the algorithm: `coach.agents.acer`): its
algorithm parameters, the pieces of its update as functions (Retrace targets, the truncated
importance-weighted policy objective with its bias correction, the trust region's
projection) and `ACERLearner`, whose `learn` is the update on time-major segments, top to
bottom.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from coach import validation as check
from coach.agents.algorithm import AlgorithmParameters
from coach.agents.learning import Learner, on_device
from coach.core.action_masks import legal_only
from coach.core.spaces import first_action
from coach.core.types import Batch

EPS = 1e-6
"""Keeps divisions by probabilities and their logarithms finite."""


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
        check.number(
            "importance_weight_truncation", self.importance_weight_truncation, 0, low_open=True
        )
        check.number("max_KL_divergence", self.max_KL_divergence, 0)
        check.number("avg_network_decay", self.avg_network_decay, 0, 1)
        check.number("beta_entropy", self.beta_entropy)
        check.number("q_loss_weight", self.q_loss_weight, 0)


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
        algorithm = self.algorithm
        c = algorithm.importance_weight_truncation
        b = on_device(batch, self.device)
        steps, count = b.rewards.shape
        states = {k: v.flatten(0, 1) for k, v in b.states.items()}
        actions = (b.actions.flatten(0, 1).long() - self.offset)[:, None]
        outputs = self.network(states)
        probs = torch.softmax(legal_only(outputs["policy"], states), dim=1)
        q = outputs["q"]
        with torch.no_grad():
            pi = probs.detach()
            q_values = q.detach()
            values = (pi * q_values).sum(1)
            rho = pi / (b.extras["mu"].flatten(0, 1) + EPS)
            average = self.network.target_predict(states)
            critic = average["q"] if algorithm.bootstrap_from_average else q_values
            q_ret = retrace_targets(
                rewards=b.rewards,
                q_taken=critic.gather(1, actions).view(steps, count),
                values=(pi * critic).sum(1).view(steps, count),
                truncated_ratios=rho.gather(1, actions).clamp(max=1.0).view(steps, count),
                ended=b.terminated | b.truncated,
                successor_values=self.successor_values(b),
                discount=algorithm.discount,
            ).flatten()
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
