"""A preset trained by asynchronous workers, as A3C trains (Mnih et al., 2016, "Asynchronous
Methods for Deep Reinforcement Learning"): ``coach -p CartPole_A3C -n 2``.

Each of the N workers (`coach.parallel.asynchronous_worker`) owns its environment copies
and a whole agent: it acts, learns from its own rollouts, and applies its gradients to
weights every worker shares, without locks: in shared memory on this machine
(`coach.parallel.hogwild`), held by a parameter-holder actor on Ray
(`coach.parallel.parameter_holder`). A worker's weights come back from the shared ones
before each of its rollouts. The agent must learn from its own fresh rollouts (a
`RolloutParameters` memory): A2C's update is A3C's, `RolloutNStepQAgentParameters` is
asynchronous n-step Q-learning (with a target network shared and refreshed on the global
clock, and each worker's own final epsilon, ``AsynchronousParameters.final_epsilons``).

This process keeps doing what a run does, on the shared weights: its own agent holds them
(the very tensors, locally; a copy fetched before each evaluation and checkpoint, on Ray),
evaluates them in its own environment copies at the preset's evaluation schedule, writes
the checkpoints (``best.pt`` and ``latest``), progress.csv and TensorBoard. The budgets are
counted in the env steps, episodes and gradient steps the workers report, summed over them.
The workers run between evaluations and wait during them. A worker that dies is restarted
with a fresh seed (`coach.parallel.pool`), and the log says so. The workers' updates
interleave as the machine schedules them: the same seed does not give the same numbers twice.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

from coach.agents.agent import Agent
from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps, StepUnit
from coach.environments.environment import Environment
from coach.errors import CoachError, RunInterrupted
from coach.graph_managers.basic_rl import SingleAgentActing
from coach.graph_managers.evaluation import EvaluationResult
from coach.graph_managers.graph_manager import GraphManager
from coach.graph_managers.parameters import RunContext
from coach.level_manager import Level
from coach.memories.rollout import RolloutParameters
from coach.parallel.asynchronous_worker import (
    AsynchronousLevel,
    AsynchronousWorker,
    ParameterServer,
    Progress,
    draw_final_epsilon,
    with_final_epsilon,
)
from coach.parallel.counted import WorkersGraphManager
from coach.parallel.hogwild import SharedWeights, target_schedule
from coach.parallel.parameters import AsynchronousParameters
from coach.parallel.pool import WorkerPool
from coach.parallel.worker import RunsOnWorkers, WorkerSpec
from coach.parameter_tree import validate_parameters

NOT_REPRODUCIBLE = (
    "asynchronous training does not reproduce the same numbers for the same seed: the "
    "workers' updates interleave as the machine schedules them"
)
"""What the log says once, when the workers start."""


class AsynchronousGraphManager(WorkersGraphManager):
    """A preset's graph of one agent, trained by asynchronous workers.

    Args:
        graph: The preset's graph (a `BasicRLGraphManager`: one agent, its environment and
            schedule); ``num_envs`` environment copies per worker.
        params: How many workers, on which backend (``-n``, ``--backend`` override them).
    """

    def __init__(self, graph: GraphManager, params: AsynchronousParameters | None = None) -> None:
        if not isinstance(graph, RunsOnWorkers):
            raise CoachError(
                f"asynchronous workers run presets of one agent; this preset's graph is a "
                f"{type(graph).__name__}"
            )
        acting = graph.acting_graph()  # batch RL, for one, says why it cannot
        if not isinstance(acting, SingleAgentActing):
            raise CoachError(
                f"asynchronous workers run presets of one agent, not a {type(graph).__name__}"
            )
        super().__init__(graph.name, graph.schedule_params)
        self.graph = graph
        self.acting = acting
        self.params = params if params is not None else AsynchronousParameters()
        self.pool: WorkerPool | None = None
        self.server: ParameterServer | None = None
        self._close_server: Callable[[], None] = lambda: None
        self._gather: Callable[[], None] = lambda: None
        """Brings the shared weights into this process's agent (on Ray; locally it holds
        them)."""
        self._in_flight: dict[int, list[tuple[int, int]]] = {}
        """Each worker's calls under way, oldest first: their env steps and episodes."""
        self._worker_updates: Callable[[], dict[int, dict[str, int]]] = dict
        """Each worker's gradient steps, as the parameter holder counts them (Ray)."""

    def parameters(self) -> dict[str, Any]:
        return {**self.graph.parameters(), "parallel": self.params}

    def validate(self, workers: int = 1) -> None:
        """The preset's own checks (each worker learns from its own copies), the workers'
        parameters, and whether the agent can learn asynchronously."""
        self.graph.validate()
        validate_parameters({"parallel": self.params})
        # Every worker steps its own copies: together they take this many env steps at once.
        num_envs, workers = self.acting.env_params.num_envs, self.params.num_workers
        self.schedule_params.validate_for_copies(num_envs, workers)
        agent = self.acting.agent_params
        if not isinstance(agent.memory, RolloutParameters):
            raise CoachError(
                f"asynchronous workers learn from their own fresh rollouts: the agent needs a "
                f"RolloutParameters memory (A3C's ActorCriticAgentParameters, "
                f"RolloutNStepQAgentParameters); {type(agent).__name__} has "
                f"{type(agent.memory).__name__}"
            )
        if self.params.final_epsilons:  # refused now if the exploration cannot take them
            with_final_epsilon(copy.deepcopy(agent), self.params.final_epsilons[0])

    def take_worker_options(
        self,
        num_workers: int | None,
        backend: str = "local",
        ray_address: str | None = None,
        evaluation_worker: bool = False,
    ) -> None:
        """Set the workers as the command line's ``-n``, ``--backend`` and ``--ray-address``
        ask (what they leave out stays the preset's); ``-ew`` is refused."""
        if evaluation_worker:
            raise CoachError(
                "-ew evaluates beside rollout workers; this preset trains with asynchronous "
                "workers, and this process evaluates their shared weights already"
            )
        if num_workers is not None:
            self.params.num_workers = num_workers
        if backend != "local" or ray_address:
            self.params.backend, self.params.ray_address = backend, ray_address
        self.validate()  # the workers against this machine and the budget, before any start

    @property
    def agent(self) -> Agent:
        """This process's agent: it holds the shared weights."""
        return self.levels[0].only_agent("asynchronous training")

    # -- building ---------------------------------------------------------------------------

    def _build(self, context: RunContext) -> tuple[Environment, Sequence[Level]]:
        graph = self.graph
        graph.context, graph.logger = context, self.logger
        environment, levels = graph._build(context)
        agent = levels[0].only_agent("asynchronous training")
        if agent.input_filter.running_statistics():
            environment.close()
            raise CoachError(
                "asynchronous workers would each normalize with running statistics of their "
                "own: this agent's input filter keeps some (a normalization filter)"
            )
        return environment, levels

    def start_workers(self) -> WorkerPool:
        """The workers, started the first time the run acts (an evaluation alone needs
        none)."""
        if self.pool is not None:
            return self.pool
        params, context, agent = self.params, self.context, self.agent
        targets = target_schedule(self.acting.agent_params)
        num_envs = self.environment.num_envs if self.environment is not None else 1
        ranks = params.num_workers + 1  # rank 0: this process's own copies

        def on_restart(message: str) -> None:
            if self.logger is not None:
                self.logger.info(message)

        if params.backend == "ray":
            server = self._start_holder(agent, targets)
        else:
            server = SharedWeights(
                agent,
                params.num_workers,
                targets,
                agent.training_env_steps,
                agent.training_steps,
                agent.episodes,
            )
        self.server = server

        def seed_of(rank: int, start: int) -> int:
            # Copy i of worker r is seeded seed + (r + start * ranks) * num_envs + i: apart
            # from every other copy, this process's (rank 0) and earlier starts included.
            return context.seed + (rank + start * ranks) * num_envs

        def make_spec(rank: int, start: int) -> WorkerSpec:
            seed = seed_of(rank, start)
            level = AsynchronousLevel(
                self.acting.agent_params,
                self.acting.env_params,
                server,
                draw_final_epsilon(params, seed),
            )
            return WorkerSpec(
                graph=level,
                seed=seed,
                rank=rank,
                num_threads=context.num_threads,
                worker=AsynchronousWorker,
            )

        if params.backend == "ray":
            from coach.parallel.ray_workers import RayWorkerPool

            self.pool = RayWorkerPool(
                make_spec, params.num_workers, False, on_restart, address=params.ray_address
            )
        else:
            from coach.parallel.local import LocalWorkerPool

            self.pool = LocalWorkerPool(make_spec, params.num_workers, False, on_restart)
        if self.logger is not None:
            pids = self.pool.pids()
            self.logger.info(
                f"{params.num_workers} asynchronous workers on the {params.backend} backend "
                f"(pids {', '.join(str(pids[r]) for r in sorted(pids))}): each acts and learns "
                f"in its own environment copies, its gradients applied to the shared weights "
                f"without locks; {NOT_REPRODUCIBLE}"
            )
            if params.final_epsilons:  # a restarted worker draws again, with its new seed
                finals = [draw_final_epsilon(params, seed_of(r, 0)) for r in range(1, ranks)]
                listed = ", ".join(f"worker {r}: {e:g}" for r, e in enumerate(finals, 1))
                self.logger.info(f"final epsilons drawn for the workers ({listed})")
        return self.pool

    def _start_holder(self, agent: Agent, targets: Any) -> ParameterServer:
        """The parameter-holder actor (and the Ray runtime, unless one is running)."""
        from coach.parallel.parameter_holder import HolderClient, ParameterHolder, holder_arguments
        from coach.parallel.ray_workers import start_ray

        ray, owns_runtime = start_ray(self.params.ray_address, self.params.num_workers)
        networks, hyperparameters = holder_arguments(agent)
        actor = ray.remote(num_cpus=0, max_restarts=0)(ParameterHolder)
        holder = actor.remote(
            networks,
            hyperparameters,
            targets,
            agent.training_env_steps,
            agent.training_steps,
            agent.episodes,
        )

        def gather() -> None:
            for name, state in ray.get(holder.state.remote()).items():
                self.agent.networks[name].load_state_dict(state)

        def close() -> None:
            ray.kill(holder, no_restart=True)
            if owns_runtime and ray.is_initialized():
                ray.shutdown()

        self._gather, self._close_server = gather, close
        self._worker_updates = lambda: ray.get(holder.worker_updates.remote())
        return HolderClient(holder, list(networks))

    # -- counters ---------------------------------------------------------------------------

    def worker_updates(self) -> dict[int, dict[str, int]]:
        """Each worker's gradient steps applied to the shared weights, per network."""
        if isinstance(self.server, SharedWeights):
            return self.server.updates()
        return self._worker_updates() if self.server is not None else {}

    def worker_pids(self) -> dict[int, int]:
        """Each worker's process id, by rank."""
        return self.pool.pids() if self.pool is not None else {}

    # -- training through the workers -------------------------------------------------------

    def _run(self, budget: StepUnit, on_response: Any = None) -> None:
        if self._phase is RunPhase.EVALUATE:  # in this process's own environment copies
            super()._run(budget, on_response)
            return
        pool = self.start_workers()
        count = self._counter(budget)
        end = count() + budget.num_steps
        self.report.restart()
        while not self.stopped_early:
            self._hand_out(budget, lambda: end - count())
            if not self._in_flight:
                break
            self._take(*pool.next_result())
            self._after_block()

    def _hand_out(self, budget: StepUnit, left: Callable[[], int]) -> None:
        """Give every worker a call under way and one queued behind it (no wait between
        two), as long as the calls under way do not cover what is ``left`` of the budget.
        Near a budget's end each call asks for a fair share of what is left, so that the
        workers finish it together."""
        assert self.pool is not None
        params = self.params
        by_steps = isinstance(budget, EnvironmentSteps)
        by_episodes = isinstance(budget, EnvironmentEpisodes)
        share = 2 * params.num_workers
        for depth in (1, 2):
            for rank in self.pool.idle(depth=depth):
                calls = [call for calls in self._in_flight.values() for call in calls]
                steps, episodes = params.report_steps, None
                if by_steps or by_episodes:
                    unreserved = left() - sum(call[0 if by_steps else 1] for call in calls)
                    if unreserved <= 0:
                        return
                    fair = max(1, -(-unreserved // share))
                    if by_steps:
                        steps = min(steps, fair)
                    else:
                        episodes = fair
                elif left() <= 0:
                    return
                self.pool.submit(rank, "collect", steps, self._phase, episodes)
                self._in_flight.setdefault(rank, []).append((steps, episodes or 0))

    def _take(self, rank: int, progress: Progress) -> None:
        """Count a worker's call and log what it reports."""
        calls = self._in_flight[rank]
        calls.pop(0)
        if not calls:
            del self._in_flight[rank]
        self.collected_steps += progress.env_steps
        self.collected_episodes += len(progress.episodes)
        agent = self.agent
        agent.env_steps += progress.env_steps
        if progress.phase is RunPhase.TRAIN:
            agent.training_env_steps += progress.env_steps
        agent.training_steps += progress.gradient_steps
        agent.training_rounds += progress.rounds
        for reward, length, success in progress.episodes:
            agent.episodes += 1
            agent.log.episode(progress.phase, reward, length, success)
        if self.logger is not None:
            run = f"worker_{rank}"
            for tag, value in progress.scalars:
                self.logger.scalar(run, tag, value)
            if progress.seconds > 0:
                rate = progress.env_steps / progress.seconds
                self.logger.scalar(run, "Time/env_steps_per_second", rate)

    def _after_block(self) -> None:
        if self.stop_requested is not None:
            raise RunInterrupted(self.stop_requested)
        checkpoints = self._checkpoints
        if checkpoints is not None and checkpoints.due(self.env_steps):
            self.save_checkpoint()
        self.report.step()

    # -- the shared weights, read here -------------------------------------------------------

    def evaluate(self, steps: StepUnit) -> EvaluationResult:
        self._gather()
        return super().evaluate(steps)

    def state_dict(self, include_memory: bool = False) -> dict[str, Any]:
        self._gather()
        return super().state_dict(include_memory)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None
        self._close_server()
        self._close_server = lambda: None
        self.server = None
        self._in_flight.clear()
        super().close()
