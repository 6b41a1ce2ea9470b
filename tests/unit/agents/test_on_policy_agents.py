"""The on-policy agents (Clipped PPO, PPO, A2C, policy gradients): the surrogate and its
gradient, the KL penalty's adaptation, discrete and continuous actions, determinism."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces

from coach.agents.actor_critic import ActorCriticAgentParameters
from coach.agents.clipped_ppo import ClippedPPOAgentParameters, clipped_surrogate_loss
from coach.agents.learning import Clock
from coach.agents.on_policy import OnPolicyAgent, OnPolicyAgentParameters
from coach.agents.on_policy_learning import OnPolicyLearner
from coach.agents.policy_gradients import PolicyGradientsAgentParameters
from coach.agents.ppo import PPOAgent, PPOAgentParameters
from coach.core.action_masks import ACTION_MASK
from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentSteps
from coach.environments.parameters import GymEnvironmentParameters
from coach.graph_managers.basic_rl import BasicRLGraphManager
from coach.graph_managers.parameters import RunContext, ScheduleParameters
from coach.memories.rollout import RolloutParameters
from coach.networks.heads import GaussianPolicyHeadParameters, VHeadParameters
from coach.networks.parameters import NetworkParameters, RecurrentParameters
from tests.masked_game import ACTIONS, MaskedGame, masked_observations


def test_clipped_surrogate_by_hand() -> None:
    old = torch.zeros(4)
    # Ratios 1.5, 1.5, 0.5, 1.0 with advantages +1, -1, -1, +2 and clip 0.2:
    # min(1.5, 1.2) = 1.2; min(-1.5, -1.2) = -1.5; min(-0.5, -0.8) = -0.8; 2.0.
    log_prob = torch.log(torch.tensor([1.5, 1.5, 0.5, 1.0])).requires_grad_()
    advantages = torch.tensor([1.0, -1.0, -1.0, 2.0])
    loss = clipped_surrogate_loss(log_prob, old, advantages, clip=0.2)
    torch.testing.assert_close(loss, -torch.tensor((1.2 - 1.5 - 0.8 + 2.0) / 4))
    loss.backward()
    assert log_prob.grad is not None
    # d(-r A / 4)/d log r = -r A / 4 where unclipped; zero where the clip holds the ratio.
    torch.testing.assert_close(log_prob.grad, torch.tensor([0.0, 1.5 / 4, 0.0, -2.0 / 4]))


def graph(level: str, agent: OnPolicyAgentParameters, seed: int) -> BasicRLGraphManager:
    schedule = ScheduleParameters(heatup_steps=EnvironmentSteps(0))
    environment = GymEnvironmentParameters(level=level, num_envs=2)
    g = BasicRLGraphManager(agent, environment, schedule)
    g.create_graph(RunContext(seed=seed))
    return g


def small(continuous: bool = False) -> ClippedPPOAgentParameters:
    agent = ClippedPPOAgentParameters()
    agent.memory = RolloutParameters(rollout_length=16)
    agent.algorithm.batch_size = 8
    agent.algorithm.epochs = 2
    if continuous:
        agent.network_wrappers = {
            "main": NetworkParameters(
                heads=[GaussianPolicyHeadParameters(), VHeadParameters()], learning_rate=1e-3
            )
        }
    return agent


@pytest.mark.parametrize(("level", "continuous"), [("CartPole-v1", False), ("Pendulum-v1", True)])
def test_blocks_train_and_the_same_seed_gives_the_same_numbers(
    level: str, continuous: bool
) -> None:
    runs = []
    for seed in (3, 3, 4):
        g = graph(level, small(continuous), seed)
        g.train_and_act(EnvironmentSteps(96))  # 3 blocks of 16 steps x 2 envs
        agent = g.top_level.agent
        # 3 blocks x 2 epochs x 4 minibatches of 8.
        assert agent.training_steps == 24 and agent.training_rounds == 3
        params = torch.cat(
            [p.detach().flatten() for p in agent.networks["main"].online.parameters()]
        )
        runs.append(params)
        g.close()
    assert torch.equal(runs[0], runs[1]) and not torch.equal(runs[0], runs[2])


def test_continuous_actions_stay_in_bounds_and_evaluation_is_deterministic() -> None:
    g = graph("Pendulum-v1", small(continuous=True), 0)
    agent = g.top_level.agent
    g.train_and_act(EnvironmentSteps(4))
    info = agent.act()
    assert isinstance(agent.action_space, spaces.Box)
    assert np.all(np.abs(info.action) <= 2.0) and info.log_prob is not None
    agent.phase = RunPhase.EVALUATE
    np.testing.assert_array_equal(agent.act().action, agent.act().action)
    g.close()


def test_rollout_state_round_trip_mid_block() -> None:
    g = graph("CartPole-v1", small(), 0)
    g.train_and_act(EnvironmentSteps(10))  # 5 of 16 steps stored
    rollout = g.top_level.agent.memory
    state = rollout.state_dict()  # type: ignore[union-attr]
    other = RolloutParameters(rollout_length=16).build(
        rollout.observation_space, rollout.action_space, np.random.default_rng(0),  # type: ignore[union-attr]
        rollout.extra_spaces,  # type: ignore[union-attr]
    )  # fmt: skip
    other.load_state_dict(state)
    assert other.steps == 5 and other.num_envs == 2
    np.testing.assert_array_equal(other.columns["rewards"][:5], rollout.columns["rewards"][:5])  # type: ignore[union-attr]
    g.close()


def test_a2c_takes_one_step_per_block_on_the_whole_block() -> None:
    agent = ActorCriticAgentParameters()
    g = graph("CartPole-v1", agent, 0)
    g.train_and_act(EnvironmentSteps(50))  # 5 blocks of 5 steps x 2 envs
    assert g.top_level.agent.training_steps == 5
    g.close()


def test_a2c_policy_loss_is_the_advantage_weighted_log_likelihood() -> None:
    g = graph("CartPole-v1", ActorCriticAgentParameters(), 0)
    agent = g.top_level.agent
    assert isinstance(agent, OnPolicyAgent)
    learner = agent.learner
    assert isinstance(learner, OnPolicyLearner)
    learn = learner.learn_block
    expected, reported = [], []

    def spy(clock: Clock) -> tuple[int, dict[str, float]]:
        learner.compute_advantages()
        block = next(iter(learner.minibatches()))  # A2C: the whole block at once
        with torch.no_grad():
            view = learner.evaluate(block)
        expected.append(float(-(view.log_prob * view.advantages).mean()))
        learner.minibatches = lambda: iter([block])  # type: ignore[method-assign]
        steps, losses = learn(clock)
        reported.append(losses["policy_loss"])
        return steps, losses

    learner.learn_block = spy  # type: ignore[method-assign]
    g.train_and_act(EnvironmentSteps(10))  # one block of 5 steps x 2 envs
    g.close()
    assert len(reported) == 1 and reported[0] == pytest.approx(expected[0], rel=1e-6)


def test_ppo_kl_coefficient_adapts_to_the_target() -> None:
    params = PPOAgentParameters()
    params.memory = RolloutParameters(rollout_length=16)
    params.algorithm.batch_size = 8
    params.algorithm.target_kl = 1e-9  # any update overshoots it: beta must double
    g = graph("CartPole-v1", params, 0)
    agent = g.top_level.agent
    assert isinstance(agent, PPOAgent)
    g.train_and_act(EnvironmentSteps(64))  # two blocks
    assert agent.learner.kl_coefficient == 4.0
    agent.params.algorithm.target_kl = 1e9  # nothing reaches it: beta halves
    g.train_and_act(EnvironmentSteps(32))
    assert agent.learner.kl_coefficient == 2.0
    g.close()


@pytest.mark.parametrize(
    "params_class", [PPOAgentParameters, PolicyGradientsAgentParameters, ActorCriticAgentParameters]
)
def test_same_seed_same_numbers(params_class: type) -> None:
    runs = []
    for seed in (1, 1, 2):
        params = params_class()
        params.memory = RolloutParameters(rollout_length=16)
        g = graph("CartPole-v1", params, seed)
        g.train_and_act(EnvironmentSteps(96))
        net = g.top_level.agent.networks["main"].online
        runs.append(torch.cat([p.detach().flatten() for p in net.parameters()]))
        g.close()
    assert torch.equal(runs[0], runs[1]) and not torch.equal(runs[0], runs[2])


# -- action masks: the masked distribution, in acting and in learning --------------------------

MASKS = np.array([[1, 0, 1, 1], [0, 0, 1, 0], [0, 0, 0, 0]], dtype=np.int8)
"""Three states: actions 0, 2 and 3 legal; action 2 alone; none (every action counts)."""


def masked_agent(params: OnPolicyAgentParameters) -> OnPolicyAgent:
    params.memory = RolloutParameters(rollout_length=8)
    params.algorithm.batch_size = 16  # whole sequences of 8 steps, for a recurrent network
    params.validate()
    agent = params.agent_class()(params, masked_observations(), spaces.Discrete(ACTIONS), 3, 0)
    assert isinstance(agent, OnPolicyAgent)
    return agent


@pytest.mark.parametrize(
    "params_class",
    [ClippedPPOAgentParameters, PPOAgentParameters, ActorCriticAgentParameters],
    ids=["ClippedPPO", "PPO", "A2C"],
)
def test_a_masked_policy_is_the_renormalized_distribution_over_the_legal_actions(
    params_class: type,
) -> None:
    agent = masked_agent(params_class())
    states = {
        "observation": torch.as_tensor(
            np.random.default_rng(0).random((3, 4)), dtype=torch.float32
        ),
        ACTION_MASK: torch.as_tensor(MASKS),
    }
    with torch.no_grad():
        logits = agent.actor(states)["policy"].double().numpy()
        distribution = agent.distribution(states)
    legal = MASKS.astype(bool)
    legal[2] = True
    for row in range(3):  # by hand: the softmax of the legal actions' logits alone
        weights = np.exp(logits[row, legal[row]] - logits[row, legal[row]].max())
        p = weights / weights.sum()
        actions = torch.as_tensor(np.flatnonzero(legal[row]))
        np.testing.assert_allclose(
            distribution.log_probs[row, actions].numpy(), np.log(p), rtol=1e-5
        )
        np.testing.assert_allclose(
            float(distribution.entropy()[row]), -(p * np.log(p)).sum(), rtol=1e-5
        )
        assert (distribution.log_probs[row].exp()[~legal[row]] == 0.0).all()
    one_each = torch.tensor([3, 2, 1])
    log_prob = distribution.log_prob(one_each)
    assert torch.isfinite(log_prob).all() and torch.isfinite(distribution.entropy()).all()


@pytest.mark.parametrize("recurrent", [False, True], ids=["feed-forward", "recurrent"])
def test_learning_sees_the_masked_distribution_that_acting_sampled_from(recurrent: bool) -> None:
    params = ClippedPPOAgentParameters()
    if recurrent:
        params.network_wrappers["main"].middleware.recurrent = RecurrentParameters(size=8)
    agent = masked_agent(params)
    learner = agent.learner
    assert isinstance(learner, OnPolicyLearner)
    game = MaskedGame()
    agent.phase = RunPhase.TRAIN
    agent.reset(game.reset())
    for _ in range(8):  # one full block
        agent.observe(game.step(agent.act().env_action))
    assert game.illegal == 0
    learner.compute_advantages()
    compared = 0
    for minibatch in learner.minibatches():
        view = learner.evaluate(minibatch)  # the networks have not moved yet
        torch.testing.assert_close(view.log_prob, view.rows.extras["log_prob"], atol=1e-5, rtol=0)
        entropy = view.distribution.entropy()
        loss = -(view.log_prob * view.advantages).mean() - 0.01 * entropy.mean()
        loss.backward()
        assert torch.isfinite(entropy).all()
        assert all(
            p.grad is None or torch.isfinite(p.grad).all() for p in agent.actor.online.parameters()
        )
        compared += len(view.log_prob)
    assert compared == 8 * game.num_envs
