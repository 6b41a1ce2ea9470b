"""Asynchronous n-step Q-learning on CartPole-v1 (Mnih et al., 2016, "Asynchronous Methods for
Deep Reinforcement Learning", algorithm S2): 4 workers, each in a CartPole of its own, act
e-greedily for t_max = 5 steps, then regress Q(s, a) on the rewards to the block's end
bootstrapped from a target network, and apply the gradient to shared weights without locks
(Hogwild!) through a shared Adam. The target network is shared too, refreshed every 10,000 env
steps of the global clock (every worker's), and the shared Adam's rate runs down from 5e-4 to
0 over the run's 30,000 steps on that clock. As in the paper, each worker anneals its epsilon
from 1 towards a final value of its own over 10,000 of its own steps (a worker takes about
7,500 of the run's 30,000, so it ends a quarter of the way short), the final values drawn
from 0.1, 0.01 and 0.5 with probabilities 0.4, 0.3 and 0.3. ``-n N`` sets the workers,
``--backend ray`` runs them as Ray actors.

Its promise is in env steps, not episodes: a worker that keeps exploring with epsilon 0.5
ends an episode every 20 to 30 steps, so the episodes summed over the workers say more about
the draw of epsilons than about learning. What made the final agent hold, measured with
golden's rule: with 2 workers and the target refreshed every 1,000 or 2,500 steps the
Q-values drifted and two to six final agents in six fell below 150, whatever the rate
(2.5e-4, 5e-4, run down or not), double Q, a longer block or more env copies per worker;
with the target moved every 10,000 steps and the rate run down, 2 workers still lost 3
final agents in 18 runs (two to a policy that pushes one way, 9 steps long); 4 workers, whose
blocks come from twice as many episodes at once, kept all 18 of seeds 0 to 17 (final agents
168 to 490 on 20 fresh episodes)."""

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
    improve_steps=EnvironmentSteps(30_000),
    steps_between_evaluation_periods=EnvironmentSteps(2500),
    evaluation_steps=EnvironmentEpisodes(10),
)

agent = RolloutNStepQAgentParameters()
agent.algorithm.discount = 0.99
agent.algorithm.num_steps_between_copying_online_weights_to_target = EnvironmentSteps(10_000)
agent.algorithm.learning_rate_decay = LinearSchedule(1.0, 0.0, 30_000)  # the global clock
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
        num_workers=4,
        final_epsilons=(0.1, 0.01, 0.5),
        final_epsilon_probabilities=(0.4, 0.3, 0.3),
    ),
)

validation = PresetValidation(min_reward=150, max_env_steps=30_000, seeds=(0, 1, 2))
