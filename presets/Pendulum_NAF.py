"""NAF on Pendulum-v1 (Gu et al., 2016) with the original Coach's NAF settings but for the
learning rate: one network of 200x200 units answering mu(s), V(s) and the precision factor
L(s), Adam at 1e-4 (the paper's lower rate; at the original Coach's 1e-3 the policy
collapsed back to -1,400 late in some runs); after every env step, 5 gradient steps on
batches of 32 and the target network 0.001 of the way to the online one;
Ornstein-Uhlenbeck exploration noise; discount 0.99. The agent acts in [-1, 1], mapped onto
the torque bounds. Reaches -200 within 50,000 env steps on seeds 0, 1, 2.

(RL Zoo's Pendulum rhythm of the DDPG and TD3 presets, 200 gradient steps after each
episode, does not suit NAF: its advantage's curvature fell to zero within 20 episodes, and
the policy stayed at -1,400.)"""

from coach import (
    BasicRLGraphManager,
    EnvironmentEpisodes,
    EnvironmentSteps,
    PresetValidation,
    ScheduleParameters,
)
from coach.agents.naf import NAFAgentParameters
from coach_presets import _pendulum

BUDGET = 50_000

agent = NAFAgentParameters()
agent.network_wrappers["main"].learning_rate = 1e-4
_pendulum.act_in_unit_box(agent)

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(1000),
    improve_steps=EnvironmentSteps(BUDGET - 1000),
    steps_between_evaluation_periods=EnvironmentSteps(2000),
    evaluation_steps=EnvironmentEpisodes(10),
)
graph_manager = BasicRLGraphManager(agent, _pendulum.environment(), schedule)

validation = PresetValidation(min_reward=-200, max_env_steps=BUDGET, seeds=(0, 1, 2))
