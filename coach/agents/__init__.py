"""Agents: the shared base (an acting side, `Policy`, and a learning side, `Learner`,
composed by `Agent`) and one algorithm per module."""

from coach.agents.acer import ACERAgent, ACERAgentParameters
from coach.agents.acting import Policy
from coach.agents.actor_critic import ActorCriticAgentParameters
from coach.agents.agent import Agent
from coach.agents.algorithm import AlgorithmParameters
from coach.agents.bootstrapped_dqn import BootstrappedDQNAgent, BootstrappedDQNAgentParameters
from coach.agents.categorical_dqn import CategoricalDQNAgent, CategoricalDQNAgentParameters
from coach.agents.clipped_ppo import ClippedPPOAgent, ClippedPPOAgentParameters
from coach.agents.ddpg import DDPGAgent, DDPGAgentParameters
from coach.agents.ddqn import DDQNAgentParameters
from coach.agents.dfp import DFPAgent, DFPAgentParameters
from coach.agents.dqn import DQNAgent, DQNAgentParameters, DQNAlgorithmParameters, DQNLearner
from coach.agents.learning import Learner
from coach.agents.mmc import MMCAgent, MMCAgentParameters
from coach.agents.n_step_q import NStepQAgentParameters, RolloutNStepQAgentParameters
from coach.agents.naf import NAFAgent, NAFAgentParameters
from coach.agents.nec import NECAgent, NECAgentParameters
from coach.agents.pal import PALAgent, PALAgentParameters
from coach.agents.parameters import AgentParameters
from coach.agents.policy_gradients import PolicyGradientsAgent, PolicyGradientsAgentParameters
from coach.agents.ppo import PPOAgent, PPOAgentParameters
from coach.agents.q_learning import QAgent
from coach.agents.qr_dqn import QRDQNAgent, QRDQNAgentParameters
from coach.agents.r2d2 import R2D2Agent, R2D2AgentParameters
from coach.agents.rainbow import RainbowAgentParameters
from coach.agents.sac import SACAgent, SACAgentParameters
from coach.agents.td3 import TD3Agent, TD3AgentParameters

__all__ = [
    "ACERAgent",
    "ACERAgentParameters",
    "ActorCriticAgentParameters",
    "Agent",
    "AgentParameters",
    "AlgorithmParameters",
    "BootstrappedDQNAgent",
    "BootstrappedDQNAgentParameters",
    "CategoricalDQNAgent",
    "CategoricalDQNAgentParameters",
    "ClippedPPOAgent",
    "ClippedPPOAgentParameters",
    "DDPGAgent",
    "DDPGAgentParameters",
    "DDQNAgentParameters",
    "DFPAgent",
    "DFPAgentParameters",
    "DQNAgent",
    "DQNAgentParameters",
    "DQNAlgorithmParameters",
    "DQNLearner",
    "Learner",
    "MMCAgent",
    "MMCAgentParameters",
    "NAFAgent",
    "NAFAgentParameters",
    "NECAgent",
    "NECAgentParameters",
    "NStepQAgentParameters",
    "PALAgent",
    "PALAgentParameters",
    "PPOAgent",
    "PPOAgentParameters",
    "Policy",
    "PolicyGradientsAgent",
    "PolicyGradientsAgentParameters",
    "QAgent",
    "QRDQNAgent",
    "QRDQNAgentParameters",
    "R2D2Agent",
    "R2D2AgentParameters",
    "RainbowAgentParameters",
    "RolloutNStepQAgentParameters",
    "SACAgent",
    "SACAgentParameters",
    "TD3Agent",
    "TD3AgentParameters",
]
