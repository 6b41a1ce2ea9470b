"""DDPG with hindsight experience replay on gymnasium-robotics' Fetch tasks (Andrychowicz
et al., 2017): reach by default, push, slide or pick_and_place by ``-lvl``. After the HER
paper's (and baselines', and the original Coach's) settings: actor and critic of 3x256
units reading the observation and the desired goal, Adam at 1e-3, batches of 256, discount
0.98; after each 50-step episode, 40 gradient steps; 4 "future" relabeled copies of every
step, rewarded -1 until the goal is within 5 cm; Gaussian exploration noise of 0.2.
Reaches a success rate of 0.9 on reach within 50,000 env steps on seeds 0, 1, 2. (Push,
slide and pick-and-place need the paper's millions of steps and its observation
normalization.)"""

from coach import (
    BasicRLGraphManager,
    ConstantSchedule,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    InputEmbedderParameters,
    MiddlewareParameters,
    NetworkParameters,
    PresetValidation,
    ScheduleParameters,
)
from coach.agents.ddpg import DDPGAgentParameters
from coach.core.goals import GoalReward
from coach.exploration.additive_noise import AdditiveNoiseParameters
from coach.memories.hindsight import EpisodicHindsightExperienceReplayParameters
from coach.networks.heads import (
    DeterministicPolicyHeadParameters,
    HeadParameters,
    VHeadParameters,
)

BUDGET = 50_000


def network(head: HeadParameters, *inputs: str) -> NetworkParameters:
    return NetworkParameters(
        input_embedders={name: InputEmbedderParameters() for name in inputs},
        middleware=MiddlewareParameters(scheme=[256, 256, 256]),
        heads=[head],
        learning_rate=1e-3,
        create_target_network=True,
    )


agent = DDPGAgentParameters()
agent.algorithm.discount = 0.98
agent.algorithm.num_consecutive_playing_steps = EnvironmentSteps(50)
agent.algorithm.num_consecutive_training_steps = 40
agent.network_wrappers["actor"] = network(
    DeterministicPolicyHeadParameters(), "observation", "desired_goal"
)
agent.network_wrappers["critic"] = network(
    VHeadParameters(name="q"), "observation", "desired_goal", "action"
)
agent.exploration = AdditiveNoiseParameters(
    noise_schedule=ConstantSchedule(0.2), noise_as_percentage_from_action_space=False
)
agent.memory = EpisodicHindsightExperienceReplayParameters(
    max_size=1_000_000,
    hindsight_goal_selection_method="future",
    hindsight_transitions_per_regular_transition=4,
    goal_reward=GoalReward(
        threshold=0.05, reached_reward=0.0, not_reached_reward=-1.0, terminate_when_reached=False
    ),
)

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(1000),
    improve_steps=EnvironmentSteps(BUDGET - 1000),
    steps_between_evaluation_periods=EnvironmentSteps(2500),
    evaluation_steps=EnvironmentEpisodes(10),
)
environment = GymEnvironmentParameters(level="reach", level_set="fetch")
graph_manager = BasicRLGraphManager(agent, environment, schedule)

validation = PresetValidation(min_success_rate=0.9, max_env_steps=BUDGET, seeds=(0, 1, 2))
