"""The floor of Clipped PPO on CartPole_ClippedPPO's settings.

Its gradient step is one minibatch update; what is timed is a whole training phase on one
rollout block (GAE over the block, then every epoch's shuffled minibatches), divided by the
minibatch updates it made: what Coach's on-policy learner does with each block it is given
(`OnPolicyLearner.learn_block`), timed the same way in `benchmarks.floor`.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from benchmarks.floors.common import Update, mlp, parameters

LENGTH, ENVS = 32, 8
"""The block: 32 steps of each of 8 env copies."""
EPOCHS, BATCH = 20, 256
DISCOUNT, GAE_LAMBDA = 0.98, 0.8
CLIP_RANGE, VALUE_COEFFICIENT, ENTROPY_COEFFICIENT, MAX_NORM = 0.2, 0.5, 0.0, 0.5


def clipped_ppo_floor(observations: int = 4, actions: int = 2) -> Update:
    """A hand-written Clipped PPO training phase on
    CartPole_ClippedPPO's settings: a 64x64 tanh actor (logits) and critic, a block of 32
    steps of 8 env copies, GAE (discount 0.98, lambda 0.8; bootstrapped from the critic's
    value after the block's last step and after any truncation in it), then 20 epochs of
    shuffled minibatches of 256: advantages standardized per minibatch, the clipped
    surrogate (0.2), the value error (weight 0.5), the entropy (weight 0), each network's
    gradient norm clipped at 0.5 (foreach), one fused Adam at 1e-3 over both networks (as
    Coach's two, Adam being elementwise)."""
    generator = torch.Generator().manual_seed(0)
    actor = mlp(observations, actions, (64, 64), nn.Tanh)
    critic = mlp(observations, 1, (64, 64), nn.Tanh)
    actor_parameters, critic_parameters = list(actor.parameters()), list(critic.parameters())
    optimizer = torch.optim.Adam(actor_parameters + critic_parameters, lr=1e-3, fused=True)
    rng = np.random.default_rng(0)
    # A block as acting leaves it: states and next states, the actions taken with their
    # log-probabilities and the values of the states, rewards, episode ends.
    shape = (LENGTH, ENVS)
    states = torch.randn(*shape, observations, generator=generator)
    next_states = torch.randn(*shape, observations, generator=generator)
    taken = torch.randint(0, actions, shape, generator=generator)
    with torch.no_grad():
        old_log_prob = actor(states).log_softmax(-1).gather(-1, taken[..., None]).flatten()
        values = critic(states).squeeze(-1).double().numpy()
    rewards = np.ones(shape, dtype=np.float32)
    terminated = rng.random(shape) < 0.01
    truncated = np.zeros(shape, dtype=bool)
    flat_states, flat_taken = states.flatten(0, 1), taken.flatten()
    updates = EPOCHS * -(-LENGTH * ENVS // BATCH)

    def phase() -> None:
        for group in optimizer.param_groups:
            group["lr"] = 1e-3  # the learning rate schedule's value for the block
        next_values = np.empty_like(values)
        next_values[:-1] = values[1:]
        with torch.no_grad():
            next_values[-1] = critic(next_states[-1]).squeeze(-1).numpy()
            cut, slot = np.nonzero(truncated)
            if len(cut):
                next_values[cut, slot] = critic(next_states[cut, slot]).squeeze(-1).numpy()
        deltas = rewards + DISCOUNT * ~terminated * next_values - values
        continues = DISCOUNT * GAE_LAMBDA * ~(terminated | truncated)
        advantages = np.empty_like(deltas)
        running = np.zeros(ENVS)
        for t in range(LENGTH - 1, -1, -1):
            running = deltas[t] + continues[t] * running
            advantages[t] = running
        all_advantages = torch.from_numpy(advantages.astype(np.float32)).flatten()
        returns = torch.from_numpy((advantages + values).astype(np.float32)).flatten()
        for _ in range(EPOCHS):
            for rows in torch.randperm(LENGTH * ENVS, generator=generator).split(BATCH):
                s = flat_states[rows]
                log_probs = actor(s).log_softmax(-1)
                log_prob = log_probs.gather(1, flat_taken[rows, None]).squeeze(1)
                entropy = -(log_probs.exp() * log_probs).sum(-1).mean()
                a = all_advantages[rows]
                a = (a - a.mean()) / (a.std() + 1e-8)
                ratio = (log_prob - old_log_prob[rows]).exp()
                surrogate = torch.min(ratio * a, ratio.clamp(1 - CLIP_RANGE, 1 + CLIP_RANGE) * a)
                value_loss = (critic(s).squeeze(1) - returns[rows]).pow(2).mean()
                loss = (
                    -surrogate.mean()
                    + VALUE_COEFFICIENT * value_loss
                    - ENTROPY_COEFFICIENT * entropy
                )
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(actor_parameters, MAX_NORM, foreach=True)
                nn.utils.clip_grad_norm_(critic_parameters, MAX_NORM, foreach=True)
                optimizer.step()

    return Update(phase, updates, parameters(actor, critic))
