"""A preset's run with its acting spread over rollout workers (``coach -p NAME -n N``).

The learner (this process) owns the agent's memory, its optimizers, the logs and the
checkpoints; N rollout workers (`coach.parallel.worker`) each own ``num_envs`` environment
copies and an acting copy of the policy. The phases and budgets are those of the preset's
graph: heatup, training with periodic evaluation, counted in the env steps the workers took.

- Agents that learn from whole blocks (on-policy ones, ACER: `Memory.block_length`) run
  synchronously: the learner publishes its policy, every worker collects one block with it,
  and the learner learns from the N blocks side by side (T x N*B), then publishes again.
- Off-policy agents run asynchronously, in the manner of Ape-X (Horgan et al., 2018): every
  worker keeps collecting blocks of ``block_steps`` steps into the learner's replay memory,
  with its next block queued so that it never waits for the learner. The learner trains on
  each block as it arrives (the preset's own ratio of gradient steps to env steps) and
  publishes its policy after each training round. A block is never collected with a policy
  more than ``max_policy_lag`` publications older than the learner's: the learner waits for
  such blocks before it trains further.

Evaluation runs in the learner's own environment copies, or with ``evaluation_worker`` in a
worker of its own while training goes on. The console shows a single run's progress line and
live bars, brought up to date after each block. Episodes in flight in the workers are not part of
a checkpoint: a resumed run starts them afresh.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from coach.agents.agent import Agent
from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentSteps, StepUnit
from coach.core.types import Transition
from coach.environments.environment import Environment
from coach.errors import CoachError, RunInterrupted
from coach.graph_managers.evaluation import EvaluationResult
from coach.graph_managers.graph_manager import GraphManager
from coach.graph_managers.parameters import RunContext
from coach.level_manager import Level
from coach.memories.experience_replay import ExperienceReplay
from coach.memories.hindsight import EpisodicHindsightExperienceReplay
from coach.memories.memory import SLOT
from coach.memories.open_episodes import as_transition
from coach.memories.rollout import RolloutParameters as RP
from coach.parallel.counted import WorkersGraphManager
from coach.parallel.exchange import ingest, ingest_slots
from coach.parallel.in_flight import BlocksInFlight
from coach.parallel.parameters import DistributedParameters
from coach.parallel.pool import WorkerPool
from coach.parallel.worker import Block, PolicySnapshot, RunsOnWorkers, WorkerSpec, unpack


class DistributedGraphManager(WorkersGraphManager):
    """The learner of a run whose acting is spread over rollout workers.

    Args:
        graph: The preset's graph: one agent and its environment.
        params: How many workers, on which backend.
    """

    def __init__(self, graph: GraphManager, params: DistributedParameters) -> None:
        if not isinstance(graph, RunsOnWorkers):
            raise CoachError(
                f"rollout workers (-n) run presets of one agent or of one multi-agent level; "
                f"this preset's graph is a {type(graph).__name__}"
            )
        self.acting = graph.acting_graph()  # batch RL, for one, says why it cannot
        params.validate()
        super().__init__(graph.name, graph.schedule_params)
        self.graph = graph
        self.params = params
        self.validate()  # the workers against the budget, before a folder or worker is made
        self.pool: WorkerPool | None = None
        self.blocks: BlocksInFlight | None = None
        """The blocks the rollout workers are collecting."""
        self.version = -1
        """How many times the learner published its policy, minus one."""
        self.on_policy = False
        """Some agent learns from rollout blocks: the workers collect them in step."""
        self._block_length = 0
        """The rollout length of the agents that learn from blocks."""
        self._rows_at_once: dict[str, bool] = {}
        """Per agent: its memory stores a block's rows in one call (replay memories)."""
        self._remaining: Callable[[], int] | None = None
        """What is left of the phase's env-step budget (``None`` for other budgets)."""
        self._pending_evaluation: int | None = None
        """The training clock of the evaluation under way in the evaluation worker."""

    def parameters(self) -> dict[str, Any]:
        return self.graph.parameters()

    def validate(self, workers: int = 1) -> None:
        # An on-policy learner learns from the blocks of every worker together, and the
        # agents that learn from blocks have theirs collected together.
        self.graph.validate(workers=self.params.num_workers)
        roots = self.graph.parameters()
        every = roots["agents"] if isinstance(roots.get("agents"), dict) else {}
        for name, params in {**every, "agent": roots.get("agent")}.items():
            reason = params.agent_class().not_on_workers if params is not None else None
            if reason is not None:
                raise CoachError(
                    f"{params.agent_class().__name__} ({name}) cannot learn from rollout "
                    f"workers (-n): {reason}"
                )
        agents = self.graph.parameters().get("agents")
        if isinstance(agents, dict):
            memories = {name: params.memory for name, params in agents.items()}
            lengths = {n: m.rollout_length for n, m in memories.items() if isinstance(m, RP)}
            if len(set(lengths.values())) > 1:
                raise CoachError(
                    f"on rollout workers the agents that learn from blocks collect them "
                    f"together: give them one memory.rollout_length (they have {lengths})"
                )

    # -- building ---------------------------------------------------------------------------

    def _build(self, context: RunContext) -> tuple[Environment, Sequence[Level]]:
        graph = self.graph
        graph.context, graph.logger = context, self.logger
        environment, levels = graph._build(context)
        agents = levels[0].agents
        # One length among them: `MultiAgentGraphManager.validate` sees to it.
        memories = [a.memory for a in agents.values() if a.memory is not None]
        lengths = [m.block_length for m in memories if m.block_length is not None]
        self.on_policy = bool(lengths)
        self._block_length = max(lengths, default=0)
        # Hindsight replay keeps each worker's episodes open apart (`Memory.stream`).
        self._rows_at_once = {
            name: isinstance(a.memory, ExperienceReplay)
            and not isinstance(a.memory, EpisodicHindsightExperienceReplay)
            for name, a in agents.items()
        }
        self.pool = self._start_pool(context, environment.num_envs)
        self.blocks = BlocksInFlight(self.pool, self.params)
        if self.logger is not None:
            pids = self.pool.pids()
            params = self.params
            self.logger.info(
                f"{params.num_workers} rollout workers on the {params.backend} backend"
                f"{' and an evaluation worker' if params.evaluation_worker else ''} "
                f"(pids {', '.join(str(pids[r]) for r in sorted(pids))})"
            )
        return environment, levels

    def _start_pool(self, context: RunContext, num_envs: int) -> WorkerPool:
        params = self.params
        ranks = params.num_workers + 1  # the evaluation worker is rank 0

        def make_spec(rank: int, start: int) -> WorkerSpec:
            # Copy i of worker r is seeded seed + (r + start * ranks) * num_envs + i: distinct
            # from every other copy, the learner's own (rank 0) and earlier starts included.
            return WorkerSpec(
                graph=self.acting,
                seed=context.seed + (rank + start * ranks) * num_envs,
                rank=rank,
                num_threads=context.num_threads,
            )

        def on_restart(message: str) -> None:
            if self.logger is not None:
                self.logger.info(message)

        if params.backend == "ray":
            from coach.parallel.ray_workers import RayWorkerPool

            return RayWorkerPool(
                make_spec,
                params.num_workers,
                params.evaluation_worker,
                on_restart,
                address=params.ray_address,
            )
        from coach.parallel.local import LocalWorkerPool

        return LocalWorkerPool(make_spec, params.num_workers, params.evaluation_worker, on_restart)

    # -- acting through the workers ---------------------------------------------------------

    @property
    def agents(self) -> dict[str, Agent]:
        """The learner's agents, by name."""
        return self.levels[0].agents

    def _publish(self) -> None:
        assert self.pool is not None
        self.version += 1
        self.pool.publish(PolicySnapshot(self.version, self.levels[0].policy_state()))

    def _train(self) -> bool:
        """Every agent's training rounds that are due; whether any agent trained."""
        trained = [agent.train() for agent in self.agents.values()]
        self.levels[0].trained()
        return any(trained)

    def _run(self, budget: StepUnit, on_response: Any = None) -> None:
        if self._phase is RunPhase.EVALUATE:  # in the learner's own environment copies
            super()._run(budget, on_response)
            return
        if self.version < 0:
            self._publish()
        count = self._counter(budget)
        end = count() + budget.num_steps
        self._remaining = (lambda: end - count()) if isinstance(budget, EnvironmentSteps) else None
        self.report.restart()
        collect = self._collect_synchronously if self.on_policy else self._collect_block
        while count() < end and not self.stopped_early:
            collect()
            self._after_block()
        if not self.on_policy:
            self._drain()

    def _collect_synchronously(self) -> None:
        """One block from every worker with the same policy; learn from them together."""
        assert self.pool is not None and self.blocks is not None
        ranks = self.pool.idle()
        steps = self._round_steps(len(ranks))
        for rank in ranks:
            self.blocks.submit(rank, steps, self._phase, self.version)
        blocks: dict[int, Block] = {}
        while len(blocks) < len(ranks):
            rank, result = self._next_result()
            if rank > 0:
                blocks[rank] = result
        ordered = [blocks[rank] for rank in sorted(blocks)]
        for name, agent in self.agents.items():
            if agent.memory is None or agent.memory.block_length is None:  # off-policy beside
                for block in ordered:
                    self._ingest(name, agent, block)
                continue
            parts = {b.rank: b.agents[name] for b in ordered}
            calls = {rank: unpack(part.steps, part.widths) for rank, part in parts.items()}
            env_steps = sum(part.env_steps for part in parts.values())
            if any(("extras", SLOT) in part.steps for part in parts.values()):
                workers = self.params.num_workers  # some slots at a time:
                ingest_slots(agent, calls, env_steps, self._phase, workers)
                continue
            merged = [Transition.concatenate(s) for s in zip(*calls.values(), strict=True)]
            ingest(agent, merged, env_steps, self._phase)
        for block in ordered:
            self._account(block)
        if self._train():
            self._publish()

    def _round_steps(self, workers: int) -> int:
        """The env steps each of ``workers`` takes in a synchronous round: what the blocks in
        progress still need (a whole block in heatup, which stores none of it), and no more
        than the phase's env-step budget has left, split over every worker's copies. A
        worker run so ends where a single-process run acting in as many copies does, within
        one step of every copy; a block the budget cuts short is filled in the next period."""
        copies = self.environment.num_envs if self.environment is not None else 1
        rows = self._block_length
        if self._phase is RunPhase.TRAIN:
            memories = [a.memory for a in self.agents.values() if a.memory is not None]
            left = [m.block_steps_left for m in memories if m.block_steps_left is not None]
            rows = min(left, default=rows) or rows
        if self._remaining is not None:
            budget = max(self._remaining(), 1)
            rows = min(rows, -(-budget // (workers * copies)))  # rounded up: the budget is met
        return rows * copies

    def _collect_block(self) -> None:
        """Keep every worker busy; take the next block, learn from it, publish."""
        blocks = self.blocks
        assert blocks is not None
        blocks.fill(self._phase, self.version, self._remaining)
        self._take(self._next_block())
        # Counted with the block taken: no more than the budget needs.
        blocks.fill(self._phase, self.version, self._remaining)
        if self._phase is RunPhase.TRAIN:
            # No block may be collected with a policy more than max_policy_lag publications
            # old: take the ones that would be before publishing again.
            oldest = self.version + 1 - self.params.max_policy_lag
            while blocks and blocks.oldest_version() < oldest:
                self._take(self._next_block())
            if self._train():
                self._publish()

    def _drain(self) -> None:
        """Take the blocks still being collected (the phase's budget is spent)."""
        while self.blocks:
            self._take(self._next_block())
            if self._phase is RunPhase.TRAIN:
                self._train()
        if self._phase is RunPhase.TRAIN and self.training_steps:
            self._publish()

    def _next_block(self) -> Block:
        result: Block
        while True:
            rank, result = self._next_result()
            if rank > 0:
                return result

    def _next_result(self) -> tuple[int, Any]:
        """The next finished command; an evaluation worker's result is recorded on the way."""
        assert self.blocks is not None
        rank, result = self.blocks.next_result()
        if rank == 0:
            self._finish_evaluation(result)
        return rank, result

    def _take(self, block: Block) -> None:
        for name, agent in self.agents.items():
            self._ingest(name, agent, block)
        self._account(block)

    def _ingest(self, name: str, agent: Agent, block: Block) -> None:
        """Agent ``name``'s steps of ``block``, into ``agent``."""
        part = block.agents[name]
        if self._rows_at_once[name] and part.widths:
            # A replay memory stores rows alike however they are batched: one call.
            steps = [as_transition(part.steps)]
        else:
            steps = unpack(part.steps, part.widths)
        ingest(agent, steps, part.env_steps, block.phase, source=block.rank)

    def _account(self, block: Block) -> None:
        """Count a block's steps and episodes, and log them."""
        several = len(self.agents) > 1
        for name, agent in self.agents.items():
            part = block.agents[name]
            statistics = agent.input_filter.running_statistics()
            for stats, taken in zip(statistics, part.statistics, strict=True):
                stats.merge(taken)
            for reward, length, success in part.episodes:
                agent.episodes += 1
                agent.log.episode(block.phase, reward, length, success)
            if self.logger is not None:
                run = f"worker_{block.rank}.{name}" if several else f"worker_{block.rank}"
                for tag, value in part.scalars:
                    self.logger.scalar(run, tag, value)
        self.collected_steps += block.env_steps
        self.collected_episodes += len(block.episodes)
        self.levels[0].report_episodes(block.phase, block.episodes)
        if self.logger is not None:
            if block.seconds > 0:
                rate = block.env_steps / block.seconds
                self.logger.scalar(f"worker_{block.rank}", "Time/env_steps_per_second", rate)
            self.logger.scalar("graph", "Time/policy_lag", self.version - block.version)

    def _after_block(self) -> None:
        if self.stop_requested is not None:
            raise RunInterrupted(self.stop_requested)
        checkpoints = self._checkpoints
        if checkpoints is not None and checkpoints.due(self.env_steps):
            self.save_checkpoint()
        self.report.step()  # the progress line and the live bar, when due

    # -- evaluation aside -------------------------------------------------------------------

    def evaluation_period(self, steps: StepUnit) -> None:
        if not self.params.evaluation_worker:
            super().evaluation_period(steps)
            return
        assert self.pool is not None
        if self._pending_evaluation is not None:
            # The last one is still running: this period's is skipped rather than queued.
            if self.logger is not None:
                self.logger.info("the evaluation worker is still busy; an evaluation skipped")
            return
        self._publish()
        self._pending_evaluation = self.env_steps
        self.pool.submit(0, "evaluate", steps)

    def _finish_evaluation(self, result: EvaluationResult) -> None:
        assert self._pending_evaluation is not None
        result.env_steps, self._pending_evaluation = self._pending_evaluation, None
        self.record_evaluation(result)

    def improve(self) -> None:
        super().improve()
        while self._pending_evaluation is not None:  # the last evaluation's result
            self._next_result()

    # -- checkpoints ------------------------------------------------------------------------

    def load_state_dict(self, state: dict[str, Any], whole_run: bool = True) -> None:
        super().load_state_dict(state, whole_run)
        self.version = -1  # the workers get the restored policy before they act

    def worker_pids(self) -> dict[int, int]:
        """Each worker's process id, by rank."""
        return self.pool.pids() if self.pool is not None else {}

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None
            self.blocks = None
        super().close()
