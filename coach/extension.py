"""What an agent of one's own is written from: the public extension API.

Coach's own agents are written from these pieces, and a new one takes the same::

    from coach.extension import DQNAgent, DQNAgentParameters, DQNLearner, taken_q

The names fall in groups:

- **The bases.** `Agent` (acting, storing, training, checkpoints), `AgentParameters` and
  `AlgorithmParameters` (a parameters class names the agent it builds, `agent_class`: one that
  inherits its parent's is refused), `Learner` (the update: ``learn(batch)`` returns the
  losses to log) and its `Clock`, `Policy` (actions from network outputs).
- **Value-based agents.** `QAgent`, `QLearner`, `QPolicy`, the parameters' bases
  `QAgentParameters` and `QLearningAlgorithmParameters` (DQN's `DQNAlgorithmParameters`
  adds ``double_q``) and DQN's own classes; the update helpers `taken_q` (Q of the actions
  taken, and of the next states), `td_target`, `td_targets`, `greedy_target_values`,
  `double_q_target_values`, `regress_q` (the Huber or squared regression, weighted for
  prioritized replay, its priorities given back).
- **On-policy agents.** `OnPolicyAgent`, `OnPolicyAgentParameters`,
  `OnPolicyAlgorithmParameters`, `OnPolicyLearner`, `StochasticPolicy`; GAE
  (`generalized_advantages`), V-trace for steps acted by a lagging policy (`vtrace`, its
  `VTraceReturns`), `approx_kl`, `value_error`.
- **Continuous actor-critics.** `ContinuousActorCritic`, `ActorCriticLearner`,
  `ActorCriticAlgorithmParameters`, `ContinuousActorCriticAgentParameters`,
  `DeterministicPolicy`, the critics (`Critics`, `StackedCritics`) and `soft_update`,
  `frozen`, `with_action`, `actor_network`, `critic_network`.
- **Agents that store whole episodes** (`HoldsEpisodes`), **action masks** (`legal_only`,
  `masked_values`), the records agents pass (`Batch`, `Transition`, `ActionInfo`) and the
  parameter checks a ``validate`` calls (`validation`, `InvalidParameter`).

Coach's own classes keep one lineage per family: each derives from these bases, or from the
classes of the algorithm it is a variant of (Double DQN's from DQN's), never from another
algorithm's; what two algorithms share is a function (a HAC level learns by DDPG's update,
`coach.agents.ddpg.ddpg_update`). A new agent does best to keep to the same.

Stability: from Coach 0.1, every name here keeps its meaning and signature within a minor
version; a change that breaks code written on them is announced in the changelog and keeps
the old form working, with a warning, for one minor version. Modules of `coach.agents` hold
more than this; what is not named here may change without notice.
"""

from coach import validation
from coach.agents.acting import DeterministicPolicy, Policy, QPolicy
from coach.agents.agent import Agent
from coach.agents.algorithm import AlgorithmParameters
from coach.agents.critics import (
    ActorCriticAlgorithmParameters,
    ActorCriticLearner,
    ContinuousActorCritic,
    ContinuousActorCriticAgentParameters,
    Critics,
    StackedCritics,
    actor_network,
    critic_network,
    frozen,
    soft_update,
    with_action,
)
from coach.agents.dqn import DQNAgent, DQNAgentParameters, DQNLearner
from coach.agents.held import HoldsEpisodes
from coach.agents.learning import Clock, Learner, td_targets
from coach.agents.on_policy import OnPolicyAgent, OnPolicyAgentParameters, StochasticPolicy
from coach.agents.on_policy_learning import (
    OnPolicyAlgorithmParameters,
    OnPolicyLearner,
    approx_kl,
    value_error,
)
from coach.agents.parameters import AgentParameters
from coach.agents.q_learning import (
    DQNAlgorithmParameters,
    QAgent,
    QAgentParameters,
    QLearner,
    QLearningAlgorithmParameters,
    double_q_target_values,
    greedy_target_values,
    regress_q,
    taken_q,
    td_target,
)
from coach.agents.vtrace import VTraceReturns, vtrace
from coach.core.action_masks import legal_only, masked_values
from coach.core.types import ActionInfo, Batch, Transition
from coach.memories.advantages import generalized_advantages
from coach.validation import InvalidParameter

__all__ = [
    "ActionInfo",
    "ActorCriticAlgorithmParameters",
    "ActorCriticLearner",
    "Agent",
    "AgentParameters",
    "AlgorithmParameters",
    "Batch",
    "Clock",
    "ContinuousActorCritic",
    "ContinuousActorCriticAgentParameters",
    "Critics",
    "DQNAgent",
    "DQNAgentParameters",
    "DQNAlgorithmParameters",
    "DQNLearner",
    "DeterministicPolicy",
    "HoldsEpisodes",
    "InvalidParameter",
    "Learner",
    "OnPolicyAgent",
    "OnPolicyAgentParameters",
    "OnPolicyAlgorithmParameters",
    "OnPolicyLearner",
    "Policy",
    "QAgent",
    "QAgentParameters",
    "QLearner",
    "QLearningAlgorithmParameters",
    "QPolicy",
    "StackedCritics",
    "StochasticPolicy",
    "Transition",
    "VTraceReturns",
    "actor_network",
    "approx_kl",
    "critic_network",
    "double_q_target_values",
    "frozen",
    "generalized_advantages",
    "greedy_target_values",
    "legal_only",
    "masked_values",
    "regress_q",
    "soft_update",
    "taken_q",
    "td_target",
    "td_targets",
    "validation",
    "value_error",
    "vtrace",
    "with_action",
]
