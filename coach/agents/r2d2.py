"""Recurrent DQN with stored sequences and burn-in (Kapturowski et al., 2019, "Recurrent
Experience Replay in Distributed Reinforcement Learning", R2D2).

The Q network carries a hidden state (an LSTM or GRU middleware) per env copy while it acts.
The replay keeps fixed-length sequences of each copy's steps with the hidden state the
policy had at their first step (`coach.memories.sequence_replay`). A gradient step unrolls
the online network over each sampled sequence from that stored state: the first
``burn_in`` steps only bring the state up to date (no gradient, no loss), the rest are
regressed on n-step double-Q targets computed within the sequence,

    y_t = sum_{k<m} g^k r_{t+k} + g^m Q_target(s', argmax_a Q_online(s', a)),

where the window of ``m <= n`` steps stops at an episode's end or the sequence's, and ``s'``
is the successor of its last step (nothing where that step terminated; the final
observation, valued from the state after the step, where a time limit cut the episode). The
target network unrolls the whole sequence from the same stored state. A sequence's new
priority mixes its TD errors, ``eta * max |delta| + (1 - eta) * mean |delta|``, and the loss
is weighed by the importance weights of prioritized replay. Dueling heads work as in DQN.
With an action mask, the argmax (or max) runs over each successor's legal actions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from coach import validation as check
from coach.agents.dqn import DQNAgentParameters
from coach.agents.learning import Learner
from coach.agents.q_learning import DQNAlgorithmParameters, QAgent, QLearner, regression_rows
from coach.core.action_masks import ACTION_MASK, MASKED_FILL, masked_values
from coach.core.recurrent_columns import EPISODE_START, hidden_key
from coach.core.types import Batch
from coach.memories.memory import MemoryParameters
from coach.memories.sequence_replay import SequenceReplayParameters
from coach.networks.network_wrapper import NetworkWrapper
from coach.networks.parameters import MiddlewareParameters, NetworkParameters, RecurrentParameters
from coach.validation import InvalidParameter


@dataclass(slots=True, kw_only=True)
class R2D2AlgorithmParameters(DQNAlgorithmParameters):
    """R2D2's algorithm parameters (``batch_size`` counts sequences)."""

    burn_in: int = 40
    """Steps at the start of each sequence that only bring the hidden state up to date:
    unrolled without gradient, not learned from."""
    n_step: int = 5
    """Rewards summed before bootstrapping, within a sequence."""
    double_q: bool = True
    """Bootstrap with double Q-learning."""
    priority_mix: float = 0.9
    """eta of a sequence's priority, ``eta * max |delta| + (1 - eta) * mean |delta|``."""
    batch_size: int = 64
    """Sequences per gradient step."""

    def validate(self) -> None:
        DQNAlgorithmParameters.validate(self)
        check.whole("burn_in", self.burn_in, 0)
        check.number("priority_mix", self.priority_mix, 0, 1)


def default_network() -> dict[str, NetworkParameters]:
    """A Q network with an LSTM of 64 units before one hidden layer of 64."""
    return {
        "main": NetworkParameters(
            middleware=MiddlewareParameters(scheme=[64], recurrent=RecurrentParameters(size=64)),
            create_target_network=True,
        )
    }


@dataclass(slots=True, kw_only=True)
class R2D2AgentParameters(DQNAgentParameters):
    """An R2D2 agent: a recurrent Q network learned from stored sequences."""

    algorithm: R2D2AlgorithmParameters = field(default_factory=R2D2AlgorithmParameters)
    """The algorithm's parameters."""
    memory: MemoryParameters | None = field(default_factory=SequenceReplayParameters)
    """The sequence replay."""
    network_wrappers: dict[str, NetworkParameters] = field(default_factory=default_network)
    """The recurrent Q network (``main``)."""

    def validate(self) -> None:
        DQNAgentParameters.validate(self)
        if not isinstance(self.memory, SequenceReplayParameters):
            raise InvalidParameter(
                "memory",
                "must be SequenceReplayParameters (R2D2 learns from sequences)",
                self.memory,
            )
        if self.network_wrappers["main"].recurrent is None:
            raise InvalidParameter(
                "network_wrappers.main.middleware.recurrent",
                "must be RecurrentParameters(...): R2D2's Q network carries a hidden state",
                None,
            )
        if self.algorithm.burn_in >= self.memory.sequence_length:
            raise InvalidParameter(
                "algorithm.burn_in",
                f"must be below memory.sequence_length ({self.memory.sequence_length}): some "
                f"steps of each sequence must be learned from",
                self.algorithm.burn_in,
            )

    def agent_class(self) -> type[QAgent]:
        return R2D2Agent


class R2D2Agent(QAgent):
    """Acts like any Q agent (through its exploration, on Q-values of the recurrent network
    stepped from each copy's hidden state) and stores raw steps: the sequence replay keeps
    them as sequences and the learner computes the n-step targets within them."""

    recurrent = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.n_step = None  # n-step returns are the learner's, over the stored sequences

    def memory_extras(self) -> dict[str, Any]:
        return {}  # the steps as they are (the hidden states come with every recurrent agent)

    def make_learner(self) -> Learner:
        return R2D2Learner(**self.learner_arguments())


def n_step_targets(
    rewards: torch.Tensor,
    terminated: torch.Tensor,
    done: torch.Tensor,
    successor_values: torch.Tensor,
    discount: float,
    n: int,
    first: int,
) -> torch.Tensor:
    """The n-step targets of the steps ``first ..`` of sequences, (T - first, N).

    Each window sums up to ``n`` discounted rewards from its step on, stopping after a step
    that ends an episode (``done``) or at the sequence's end, then bootstraps from the value
    of its last step's successor (nothing where that step ``terminated``).

    Args:
        rewards: (T, N) rewards.
        terminated: (T, N) the step ended its episode in a terminal state.
        done: (T, N) the step ended its episode either way.
        successor_values: (T, N) the value of each step's successor.
        discount: gamma.
        n: The longest window.
        first: The first step that gets a target.
    """
    steps = len(rewards)
    start = torch.arange(first, steps, device=rewards.device)[:, None]  # (T', 1)
    total = torch.zeros(steps - first, rewards.shape[1], device=rewards.device)
    scale = torch.ones_like(total)
    open_ = torch.ones_like(total, dtype=torch.bool)
    last = start.expand_as(total).clone()
    for k in range(n):
        index = (start + k).clamp(max=steps - 1).expand_as(total)
        live = open_ & (start + k < steps)
        total = total + torch.where(live, scale * rewards.gather(0, index), 0.0)
        last = torch.where(live, index, last)
        scale = torch.where(live, scale * discount, scale)
        open_ = live & ~done.gather(0, index)
    bootstrap = successor_values.gather(0, last) * (~terminated.gather(0, last)).float()
    return total + scale * bootstrap


def ended(b: Batch) -> torch.Tensor:
    """Where each sequence's episodes end, (T, N): a terminal state, a time limit, or a
    next step that begins another episode (the episodes restarted before they ended: for
    an evaluation, or a rollout worker started anew). The episode-start flags say so as
    data; nothing else marks it."""
    following = torch.zeros_like(b.terminated)
    following[:-1] = b.extras[EPISODE_START][1:]
    result: torch.Tensor = b.terminated | b.truncated | following
    return result


class R2D2Learner(QLearner):
    """R2D2's update: the sequence unrolled with burn-in, n-step double-Q targets within it,
    importance-weighted regression, sequence priorities."""

    algorithm: R2D2AlgorithmParameters

    def learn(self, batch: Batch) -> dict[str, float]:
        algorithm = self.algorithm
        b = self.sampled(batch)
        net = self.q_network
        burn = algorithm.burn_in
        starts = b.extras[EPISODE_START]
        stored = b.extras[hidden_key("main")]
        actions = (b.actions - self.action_offset).long()
        # The online network: burn-in without gradient, then the steps learned from.
        online_cuts: dict[int, torch.Tensor] = {}
        with torch.no_grad():
            head = {k: v[:burn] for k, v in b.states.items()}
            hidden = net.unroll(head, stored, starts[:burn])[1] if burn else stored
        tail = {k: v[burn:] for k, v in b.states.items()}
        out, online_final = net.unroll(tail, hidden, starts[burn:], online_cuts)
        q_all = self.action_values(out)  # (T - burn, N, A)
        q = q_all.gather(2, actions[burn:, :, None]).squeeze(2)
        with torch.no_grad():
            target_cuts: dict[int, torch.Tensor] = {}
            target_out, target_final = net.target_unroll(b.states, stored, starts, target_cuts)
            successor = self.successor_values(
                b,
                q_all.detach(),
                self.action_values(target_out),
                ({t + burn: s for t, s in online_cuts.items()}, online_final),
                (target_cuts, target_final),
            )
            targets = n_step_targets(
                rewards=b.rewards,
                terminated=b.terminated,
                done=ended(b),
                successor_values=successor,
                discount=algorithm.discount,
                n=algorithm.n_step,
                first=burn,
            )
        rows = regression_rows(q, targets, algorithm.loss, algorithm.huber_delta)  # (T', N)
        td_errors = (q - targets).detach().abs()
        if self.priorities is not None:
            mix = algorithm.priority_mix
            priority = mix * td_errors.max(0).values + (1 - mix) * td_errors.mean(0)
            self.priorities.update_priorities(b.indices.cpu().numpy(), priority.cpu().numpy())
        per_sequence = rows.mean(0)
        loss = (per_sequence * b.weights).mean() if b.weights is not None else per_sequence.mean()
        net.train_step(loss)
        return {
            "q_loss": loss.item(),
            "q_mean": q.detach().mean().item(),
            "td_error": td_errors.mean().item(),
        }

    def successor_values(
        self,
        b: Batch,
        online_q: torch.Tensor,
        target_q: torch.Tensor,
        online_states: tuple[dict[int, torch.Tensor], torch.Tensor],
        target_states: tuple[dict[int, torch.Tensor], torch.Tensor],
    ) -> torch.Tensor:
        """The (double) Q value of each step's successor, (T, N): the next step's state
        while the episode goes on in the sequence; the step's own next state, valued from
        the networks' state after the step, at the sequence's end and where the episode
        ended otherwise than in a terminal state (`ended`). (Terminal steps get 0: their
        successor is never used.)

        Args:
            b: The sequences, time-major.
            online_q: The online Q-values of the steps after the burn-in, (T - burn, N, A).
            target_q: The target Q-values of every step, (T, N, A).
            online_states: The online network's states before the resets at each step
                where some copy starts an episode (by step), and after the last step.
            target_states: The same, of the target network.
        """
        steps, count = b.rewards.shape
        burn = steps - len(online_q)
        values = torch.zeros(steps, count, device=b.rewards.device)
        masks, next_masks = b.states.get(ACTION_MASK), b.next_states.get(ACTION_MASK)
        # Only the steps after the burn-in are bootstrapped from.
        over = ended(b)
        go_on = ~over
        go_on[-1] = False
        go_on[:burn] = False
        t, n = torch.nonzero(go_on, as_tuple=True)
        legal = None if masks is None else masks[t + 1, n]
        values[t, n] = self.pick(online_q[t + 1 - burn, n], target_q[t + 1, n], legal)
        # The others bootstrap from their own next state: one more step of each network.
        extra = over & ~b.terminated
        extra[-1] = ~b.terminated[-1]
        extra[:burn] = False
        t, n = torch.nonzero(extra, as_tuple=True)
        if len(t):
            online = self.one_step(b, t, n, online_states, self.q_network, target=False)
            target = self.one_step(b, t, n, target_states, self.q_network, target=True)
            values[t, n] = self.pick(
                online, target, None if next_masks is None else next_masks[t, n]
            )
        return values

    def pick(
        self, online: torch.Tensor, target: torch.Tensor, mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        """The target's value of the online network's best action (double Q), or the
        target's best value: among the actions ``mask`` (the successors' action masks, if
        any) leaves legal."""
        if mask is not None:
            online = masked_values(online, mask, MASKED_FILL)
            target = masked_values(target, mask, MASKED_FILL)
        if self.algorithm.double_q:
            return target.gather(1, online.argmax(1, keepdim=True)).squeeze(1)
        return target.max(1).values

    def one_step(
        self,
        b: Batch,
        t: torch.Tensor,
        n: torch.Tensor,
        states: tuple[dict[int, torch.Tensor], torch.Tensor],
        network: NetworkWrapper,
        target: bool,
    ) -> torch.Tensor:
        """Q-values of the next states of steps ``(t, n)``, one step of ``network`` from its
        state after each of those steps, (E, A)."""
        cuts, final = states
        last = len(b.rewards) - 1
        after = [
            final[j] if i == last else cuts[i + 1][j]
            for i, j in zip(t.tolist(), n.tolist(), strict=True)
        ]
        hidden = torch.stack(after)
        inputs = {k: v[t, n][None] for k, v in b.next_states.items()}
        unroll = network.target_unroll if target else network.unroll
        outputs, _ = unroll(inputs, hidden)
        return self.action_values(outputs)[0]
