"""Asynchronous n-step Q-learning on CartPole-v1 (Mnih et al., 2016, "Asynchronous Methods for
Deep Reinforcement Learning", algorithm S2): 2 workers, each in a CartPole of its own, act
e-greedily for t_max = 5 steps, then regress Q(s, a) on the rewards to the block's end
bootstrapped from a target network, and apply the gradient to shared weights without locks
(Hogwild!) through a shared Adam. The target network is shared too, refreshed every 1,000 env
steps of the global clock (every worker's). As in the paper, each worker anneals its epsilon
from 1 over its first 10,000 steps to a final value of its own, drawn from 0.1, 0.01 and 0.5
with probabilities 0.4, 0.3 and 0.3. ``-n N`` sets the workers, ``--backend ray`` runs them as
Ray actors.

Its promise is in env steps, not episodes: a worker that keeps exploring with epsilon 0.5
ends an episode every 20 to 30 steps, so the episodes summed over the workers say more about
the draw of epsilons than about learning. Measured on seeds 0 to 2 (tuning runs of 40,000
steps and two golden runs), the evaluations reached 150 after 5,000 to 17,500 env steps (190
to 450 episodes) and best.pt averaged 211 to 331 on 20 fresh episodes; 30,000 steps leave
room for the run-to-run spread of asynchronous training. Later on the Q-values drift and the
evaluations swing (the final agent of a run is often far below its best): best.pt keeps the
best."""

from coach import (
    BasicRLGraphManager,
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    LinearSchedule,
    MiddlewareParameters,
    NetworkParameters,
    PresetValidation,
    QHeadParameters,
    ScheduleParameters,
)
from coach.agents.n_step_q import RolloutNStepQAgentParameters
from coach.parallel.asynchronous import AsynchronousGraphManager
from coach.parallel.parameters import AsynchronousParameters

schedule = ScheduleParameters(
    heatup_steps=EnvironmentSteps(0),
    improve_steps=EnvironmentSteps(50_000),
    steps_between_evaluation_periods=EnvironmentSteps(2500),
    evaluation_steps=EnvironmentEpisodes(10),
)

agent = RolloutNStepQAgentParameters()
agent.algorithm.discount = 0.99
agent.algorithm.num_steps_between_copying_online_weights_to_target = EnvironmentSteps(1000)
agent.memory.rollout_length = 5
agent.exploration.epsilon_schedule = LinearSchedule(1.0, 0.1, 10_000)  # per worker
agent.network_wrappers["main"] = NetworkParameters(
    middleware=MiddlewareParameters(scheme=[256, 256]),
    heads=[QHeadParameters()],
    learning_rate=5e-4,
    gradient_clip_norm=10.0,
    create_target_network=True,
)

environment = GymEnvironmentParameters(level="CartPole-v1", num_envs=1)

graph_manager = AsynchronousGraphManager(
    BasicRLGraphManager(agent, environment, schedule),
    AsynchronousParameters(
        num_workers=2,
        final_epsilons=(0.1, 0.01, 0.5),
        final_epsilon_probabilities=(0.4, 0.3, 0.3),
    ),
)

validation = PresetValidation(min_reward=150, max_env_steps=30_000, seeds=(0, 1, 2))
