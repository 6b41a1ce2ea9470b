"""What the tic-tac-toe self-play presets share: PettingZoo's classic tic-tac-toe on 8
copies, an evaluation of 500 games against a uniformly random player every 20,000 moves,
and self-play against a pool of the learner's own snapshots."""

from coach import (
    AgentParameters,
    EnvironmentEpisodes,
    EnvironmentSteps,
    MultiAgentGraphManager,
    PettingZooEnvironmentParameters,
    ScheduleParameters,
    SelfPlayParameters,
)


def self_play(
    agent: AgentParameters, budget: int, heatup: int, snapshot_every: int, pool_size: int
) -> MultiAgentGraphManager:
    """``agent`` (named ``player``) learning tic-tac-toe in self-play for ``budget`` moves of
    both players (summed over the copies), after ``heatup`` random ones; a snapshot of it
    joins the pool of opponents every ``snapshot_every`` of its moves, the ``pool_size``
    newest kept."""
    return MultiAgentGraphManager(
        agents={"player": agent},
        env_params=PettingZooEnvironmentParameters(
            env="pettingzoo.classic:tictactoe_v3", num_envs=8
        ),
        schedule_params=ScheduleParameters(
            heatup_steps=EnvironmentSteps(heatup),
            improve_steps=EnvironmentSteps(budget),
            steps_between_evaluation_periods=EnvironmentSteps(20_000),
            evaluation_steps=EnvironmentEpisodes(500),
        ),
        self_play=SelfPlayParameters(
            learner="player",
            snapshot_every=EnvironmentSteps(snapshot_every),
            pool_size=pool_size,
        ),
    )
