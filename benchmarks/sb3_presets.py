"""Stable-Baselines3's run of a Coach preset, read from the loaded preset: the JSON spec that
`benchmarks.peer_runs` builds the SB3 model from, and Coach's side of the hyperparameter
table that `benchmarks.peers` prints against what that model holds.

Every value comes from the preset object (``load_preset(name)``, ``-cp`` overrides applied)
or from the agent it builds, never retyped, so the two runs cannot drift apart; a setting
SB3 cannot express raises `Unmappable` instead of being mapped to something near it. The
budget is matched in gradient steps: SB3 collects ``train_freq`` steps per round counted
from step 0 and trains once past ``learning_starts``, Coach counts its rounds from the end
of heatup, so SB3's total is the number of env steps that gives it as many rounds as Coach
(`sb3_total_timesteps`).

A learning rate schedule (``agent.algorithm.learning_rate_schedule``, over training env
steps) is matched round for round: SB3 calls its schedule with the fraction of its total
still to go, which counts ``learning_starts`` too, so an off-policy spec's schedule is
offset by the env steps SB3 collects before the rounds it shares with Coach
(`sb3_rounds_before`: heatup rounded down to whole rounds), and the table compares the two
rates at the first, middle and last rounds. A2C maps as PPO does (`_on_policy`), with Adam
in place of SB3's default RMSprop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchmarks.peer_runs import describe_network, describe_networks
from coach.agents.actor_critic import ActorCriticAgentParameters
from coach.agents.clipped_ppo import ClippedPPOAgentParameters
from coach.agents.dqn import DQNAgentParameters
from coach.agents.sac import SACAgentParameters, SACAlgorithmParameters, SACLearner
from coach.agents.td3 import TD3AgentParameters
from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps, StepUnit
from coach.exploration.additive_noise import AdditiveNoiseParameters
from coach.exploration.e_greedy import EGreedyParameters
from coach.graph_managers.basic_rl import BasicRLGraphManager
from coach.graph_managers.parameters import RunContext
from coach.graph_managers.run_state import trained_parameters
from coach.memories.experience_replay import ExperienceReplayParameters
from coach.parameters import parse_override, set_parameter
from coach.presets import load_preset
from coach.schedules import ConstantSchedule, LinearSchedule, Schedule

TORCH_ACTIVATIONS = {
    "relu": "ReLU",
    "tanh": "Tanh",
    "elu": "ELU",
    "gelu": "GELU",
    "leaky_relu": "LeakyReLU",
    "silu": "SiLU",
}
"""Coach's activation names and torch's classes, which SB3's ``activation_fn`` takes."""

ALGORITHMS = {
    DQNAgentParameters: "DQN",
    ClippedPPOAgentParameters: "PPO",
    ActorCriticAgentParameters: "A2C",
    SACAgentParameters: "SAC",
    TD3AgentParameters: "TD3",
}


class Unmappable(Exception):
    """A preset setting that SB3 has no equal of."""


@dataclass(slots=True)
class PeerPlan:
    """One preset's two runs: the SB3 spec and Coach's settings by name."""

    preset: str
    algorithm: str
    spec: dict[str, Any]
    coach: dict[str, Any]
    parameters: dict[str, Any] = field(default_factory=dict)
    """Coach's run: every settable parameter of the preset, overrides applied, as its
    ``params.yaml`` holds them (`coach.graph_managers.run_state.trained_parameters`)."""


def _require(condition: bool, what: str) -> None:
    if not condition:
        raise Unmappable(what)


def _steps(unit: StepUnit, name: str, kind: type[StepUnit] = EnvironmentSteps) -> int:
    _require(type(unit) is kind, f"{name} must be counted in {kind.__name__}, got {unit!r}")
    return int(unit.num_steps)


def _linear(schedule: Schedule, name: str) -> tuple[float, float, int]:
    """A Coach schedule as (initial, final, decay steps); only constant and linear map."""
    if isinstance(schedule, ConstantSchedule):
        return (schedule.initial_value, schedule.initial_value, 1)
    _require(isinstance(schedule, LinearSchedule), f"{name}: only a linear schedule maps")
    assert isinstance(schedule, LinearSchedule)
    return (schedule.initial_value, schedule.final_value, schedule.decay_steps)


def _one(values: list[Any], what: str) -> Any:
    """The one value the networks share (SB3 has one setting where Coach has one a net)."""
    distinct = [v for i, v in enumerate(values) if v not in values[:i]]
    _require(len(distinct) == 1, f"SB3 takes one {what} for every network, Coach has {distinct}")
    return distinct[0]


def sb3_total_timesteps(heatup: int, improve: int, period: int) -> int:
    """SB3's total env steps for as many training rounds as Coach's: Coach trains after each
    ``period`` training steps (``improve // period`` rounds); SB3 after each ``period``
    steps counted from 0, once more than ``heatup`` steps are in."""
    rounds = improve // period
    return (rounds + heatup // period) * period


def sb3_rounds_before(heatup: int, period: int) -> int:
    """Where SB3's rounds are counted from: its round ``k`` trains after
    ``sb3_rounds_before(heatup, period) + k * period`` env steps (its first round is the
    first past ``heatup``), Coach's round ``k`` after ``k * period`` training env steps."""
    return heatup // period * period


def plan(name: str, overrides: list[str] | tuple[str, ...] = (), seed: int = 0) -> PeerPlan:
    """The SB3 spec and Coach's settings of preset ``name`` with ``overrides`` (``-cp``),
    the SB3 run seeded with ``seed``."""
    graph = load_preset(name).graph_manager
    roots = graph.parameters()
    for text in overrides:
        set_parameter(roots, *parse_override(text))
    _require(isinstance(graph, BasicRLGraphManager), f"{name} is not a single-level preset")
    assert isinstance(graph, BasicRLGraphManager)
    params, environment, schedule = graph.agent_params, graph.env_params, graph.schedule_params
    algorithm = ALGORITHMS.get(type(params))
    _require(algorithm is not None, f"no SB3 peer for {type(params).__name__}")
    assert algorithm is not None
    _require(environment.vectorization == "sync", "SB3's DummyVecEnv steps copies in turn")
    built = graph.create_graph(RunContext(seed=0, quiet=True))
    try:
        (agent,) = built.top_level.agents.values()
        networks = {key: net.online for key, net in agent.networks.items()}
        box = getattr(agent.action_space, "low", None), getattr(agent.action_space, "high", None)
        target_entropy = (
            agent.learner.target_entropy if isinstance(agent.learner, SACLearner) else None
        )
    finally:
        built.close()
    heatup = _steps(schedule.heatup_steps, "schedule.heatup_steps")
    improve = _steps(schedule.improve_steps, "schedule.improve_steps")
    algo = params.algorithm
    nets = params.network_wrappers
    evaluation = {
        "start": heatup,
        "period": _steps(schedule.steps_between_evaluation_periods, "evaluation period"),
        "episodes": _steps(schedule.evaluation_steps, "evaluation_steps", EnvironmentEpisodes),
    }
    eps = _one([n.adam_epsilon for n in nets.values()], "Adam eps")
    _require(all(n.weight_decay == 0 for n in nets.values()), "SB3's Adam has no weight decay")
    activation = _one([n.middleware.activation for n in nets.values()], "activation")
    _require(
        all(not e.scheme and not e.conv for n in nets.values() for e in n.input_embedders.values()),
        "SB3's MLP policies flatten their inputs",
    )
    coach: dict[str, Any] = {
        "environment": environment.level,
        "env copies": environment.num_envs,
        "discount": algo.discount,
        "batch size": algo.batch_size,
        "optimizer": ["Adam"],  # Coach's AdamW, without weight decay (required above)
        "Adam eps": [eps],
        "evaluation start (env steps)": heatup,
        "evaluation period (env steps)": evaluation["period"],
        "evaluation episodes": evaluation["episodes"],
        "random steps first": heatup,
    }
    spec: dict[str, Any] = {
        "algorithm": algorithm,
        "env": environment.level,
        "n_envs": environment.num_envs,
        "seed": seed,
        "evaluation": evaluation,
        "policy_kwargs": {
            "activation_fn": TORCH_ACTIVATIONS[activation],
            "optimizer_kwargs": {"eps": eps},
        },
    }
    if isinstance(params, ClippedPPOAgentParameters | ActorCriticAgentParameters):
        _on_policy(params, environment.num_envs, improve, networks, coach, spec)
    else:
        assert isinstance(params, DQNAgentParameters | SACAgentParameters | TD3AgentParameters)
        _require(environment.num_envs == 1, "the off-policy peers run one env copy")
        memory = params.memory
        _require(type(memory) is ExperienceReplayParameters, "SB3's replay buffer is uniform")
        assert isinstance(memory, ExperienceReplayParameters)
        period = algo.num_consecutive_playing_steps.num_steps
        total = sb3_total_timesteps(heatup, improve, period)
        clip = [n.gradient_clip_norm for n in nets.values()]
        coach |= {
            "env steps between rounds": period,
            "round counted in": "step",
            "gradient steps per round": algo.num_consecutive_training_steps,
            "replay size": memory.max_size,
            "gradient clip norm": list(dict.fromkeys(clip)),
        }
        spec["total_timesteps"] = total
        spec["kwargs"] = {
            "buffer_size": memory.max_size,
            "learning_starts": heatup,
            "batch_size": algo.batch_size,
            "gamma": algo.discount,
            "train_freq": [period, "step"],
            "gradient_steps": algo.num_consecutive_training_steps,
        }
        spec["schedules"] = {}
        offset = sb3_rounds_before(heatup, period)
        _learning_rate(params, improve // period, period, offset, coach, spec)
        if isinstance(params, DQNAgentParameters):
            _dqn(params, heatup, total, networks, coach, spec)
        else:
            _actor_critic(params, box, target_entropy, networks, coach, spec)
    return PeerPlan(name, algorithm, spec, coach, trained_parameters(roots))


def rate_schedule(algo: Any, nets: dict[str, Any]) -> Schedule:
    """The one learning rate SB3 takes, as a schedule over Coach's training env steps: the
    algorithm's ``learning_rate_schedule``; its ``learning_rate_decay`` times the networks'
    one rate (a linear decay gives a linear rate); else that rate, constant."""
    given: Schedule | None = algo.learning_rate_schedule
    if given is not None or algo.learning_rate_decay is not None:
        _require(
            algo.learning_rate_clock == "env_steps",
            "SB3's learning rate schedule counts env steps, not "
            + algo.learning_rate_clock.replace("_", " "),
        )
    if given is not None:
        return given
    rate = _one([n.learning_rate for n in nets.values()], "learning rate")
    if algo.learning_rate_decay is None:
        return ConstantSchedule(rate)
    start, end, steps = _linear(algo.learning_rate_decay, "learning_rate_decay")
    return LinearSchedule(rate * start, rate * end, steps)


def _learning_rate(
    params: DQNAgentParameters | SACAgentParameters | TD3AgentParameters,
    rounds: int,
    period: int,
    offset: int,
    coach: dict[str, Any],
    spec: dict[str, Any],
) -> None:
    """An off-policy agent's learning rate: one rate for every network (and for SAC's
    temperature), or the algorithm's ``learning_rate_schedule``. Coach sets the scheduled
    rate before each of its ``rounds`` from its training env steps (``k * period`` before
    round ``k``), SB3 from all its env steps, ``offset`` more (`sb3_rounds_before`)."""
    algo, nets = params.algorithm, params.network_wrappers
    scheduled = algo.learning_rate_schedule or algo.learning_rate_decay
    if scheduled is None:
        rates = [n.learning_rate for n in nets.values()]
        if isinstance(algo, SACAlgorithmParameters):
            rates.append(algo.temperature_learning_rate)
        schedule: Schedule = ConstantSchedule(_one(rates, "learning rate"))
    else:
        _require(
            not (isinstance(algo, SACAlgorithmParameters) and algo.learn_temperature),
            "SB3's SAC sets its schedule's rate on the temperature's optimizer too, Coach "
            "keeps temperature_learning_rate there",
        )
        schedule = rate_schedule(algo, nets)
    initial, final, decay = _linear(schedule, "learning_rate_schedule")
    probed = [1, max(rounds // 2, 1), rounds]
    spec["kwargs"]["learning_rate"] = initial  # the schedule's callable, see peer_runs
    spec["schedules"]["learning_rate"] = [initial, final, decay, offset]
    spec["rate_probes"] = [offset + k * period for k in probed]  # SB3's env steps at them
    coach |= {
        "learning rate": [schedule.value(0)],
        "learning rate at rounds": [schedule.value(k * period) for k in probed],
    }


def _on_policy(
    params: ClippedPPOAgentParameters | ActorCriticAgentParameters,
    num_envs: int,
    improve: int,
    networks: dict[str, Any],
    coach: dict[str, Any],
    spec: dict[str, Any],
) -> None:
    """What SB3's PPO and A2C share: rollout blocks, GAE, the combined loss's weights, the
    learning rate over env steps, separate actor and critic MLPs; then `_ppo` or `_a2c`."""
    algo, nets = params.algorithm, params.network_wrappers
    algorithm = spec["algorithm"]
    _require(
        {"actor", "critic"} == set(nets),
        f"SB3's {algorithm}: separate actor and critic MLPs (no shared `main` network)",
    )
    _require(not any(n.recurrent for n in nets.values()), f"SB3's {algorithm} is feed-forward")
    length = params.memory.rollout_length  # type: ignore[union-attr]
    block = length * num_envs
    total = (improve // num_envs // length) * block  # the blocks Coach trains on
    probes = [block, total // 2 // block * block, total]
    rate = rate_schedule(algo, nets)
    clip = _one([n.gradient_clip_norm for n in nets.values()], "gradient clip norm")
    spec["total_timesteps"] = total
    spec["probes"] = probes
    # Coach's clock and SB3's count the same env steps before each block: no offset.
    spec["schedules"] = {"learning_rate": [*_linear(rate, "learning_rate_schedule"), 0]}
    spec["policy_kwargs"] |= {
        "net_arch": {
            "pi": list(nets["actor"].middleware.scheme),
            "vf": list(nets["critic"].middleware.scheme),
        },
        "ortho_init": False,  # Coach initializes as torch does (`coach.networks.model`)
    }
    spec["kwargs"] = {
        "n_steps": length,
        "gamma": algo.discount,
        "gae_lambda": algo.gae_lambda,
        "ent_coef": algo.entropy_coefficient,
        "vf_coef": algo.value_coefficient,
        "max_grad_norm": clip if clip is not None else float("inf"),
        "normalize_advantage": algo.normalize_advantages,
    }
    coach |= {
        "random steps first": 0,  # heatup's random steps are not on-policy data
        "steps per copy per block": length,
        "epochs": algo.epochs,
        "GAE lambda": algo.gae_lambda,
        "learning rate at probes": [rate.value(t) for t in probes],
        "value coefficient": algo.value_coefficient,
        "entropy coefficient": algo.entropy_coefficient,
        "gradient clip norm": [clip],
        "normalize advantages": algo.normalize_advantages,
        "orthogonal init": False,
        # SB3 evaluates with the policy's mode (deterministic=True)
        "evaluation greedy": algo.deterministic_evaluation,
        "actor": describe_network(networks["actor"]),
        "critic": describe_network(networks["critic"]),
    }
    if isinstance(params, ClippedPPOAgentParameters):
        _ppo(params, probes, coach, spec)
    else:
        _a2c(params, block, coach, spec)


def _ppo(
    params: ClippedPPOAgentParameters,
    probes: list[int],
    coach: dict[str, Any],
    spec: dict[str, Any],
) -> None:
    algo = params.algorithm
    _require(
        algo.value_clip_range is None and algo.target_kl is None,
        "value clipping and target KL: left out of this mapping",
    )
    spec["schedules"]["clip_range"] = [*_linear(algo.clip_range_schedule, "clip_range"), 0]
    spec["kwargs"] |= {
        "batch_size": algo.batch_size,
        "n_epochs": algo.epochs,
        "clip_range_vf": algo.value_clip_range,
        "target_kl": algo.target_kl,
    }
    coach |= {
        "clip range at probes": [algo.clip_range_schedule.value(t) for t in probes],
        "value clip range": algo.value_clip_range,
        "target KL": algo.target_kl,
    }


def _a2c(
    params: ActorCriticAgentParameters,
    block: int,
    coach: dict[str, Any],
    spec: dict[str, Any],
) -> None:
    algo = params.algorithm
    _require(
        algo.epochs == 1 and algo.batch_size in (0, block),
        "SB3's A2C takes one gradient step on each whole block",
    )
    # SB3's A2C defaults to RMSprop; Coach's optimizer is Adam, with the eps set above.
    spec["policy_kwargs"]["optimizer_class"] = "Adam"
    spec["kwargs"]["use_rms_prop"] = False
    coach["batch size"] = block


def _dqn(
    params: DQNAgentParameters,
    heatup: int,
    total: int,
    networks: dict[str, Any],
    coach: dict[str, Any],
    spec: dict[str, Any],
) -> None:
    algo, exploration = params.algorithm, params.exploration
    _require(algo.loss == "huber" and algo.huber_delta == 1.0, "SB3's DQN loss is smooth L1")
    _require(not algo.double_q, "SB3's DQN bootstraps with max_a' Q_target (no double Q)")
    _require(isinstance(exploration, EGreedyParameters), "SB3's DQN explores e-greedily")
    assert isinstance(exploration, EGreedyParameters)
    _require(exploration.evaluation_epsilon == 0.0, "SB3 evaluates greedily")
    head = params.network_wrappers["main"]
    _require(
        len(head.heads) == 1 and type(head.heads[0]).__name__ == "QHeadParameters",
        "SB3's DQN has a plain Q head",
    )
    initial, final, decay = _linear(exploration.epsilon_schedule, "epsilon_schedule")
    probes = [heatup, heatup + decay // 2, heatup + decay, total]
    sync = params.algorithm.num_steps_between_copying_online_weights_to_target
    spec["probes"] = probes
    spec["schedules"]["exploration_rate"] = [initial, final, decay, heatup]
    spec["policy_kwargs"]["net_arch"] = list(head.middleware.scheme)
    spec["kwargs"] |= {
        "tau": algo.target_update_rate,
        "target_update_interval": _steps(sync, "target sync period"),
        "n_steps": algo.n_step,
        "max_grad_norm": head.gradient_clip_norm,
        "exploration_initial_eps": initial,
        "exploration_final_eps": final,
        "exploration_fraction": min((heatup + decay) / total, 1.0),  # replaced, see peer_runs
    }
    schedule = exploration.epsilon_schedule
    coach |= {
        "target sync period (env steps)": sync.num_steps,
        "target sync rate": algo.target_update_rate,
        "n-step": algo.n_step,
        "epsilon at probes": [schedule.value(max(t - heatup, 0)) for t in probes],
        "evaluation greedy": exploration.evaluation_epsilon == 0.0,
        "Q network": describe_network(networks["main"]),
    }


def _actor_critic(
    params: SACAgentParameters | TD3AgentParameters,
    box: tuple[Any, Any],
    target_entropy: float | None,
    networks: dict[str, Any],
    coach: dict[str, Any],
    spec: dict[str, Any],
) -> None:
    nets = params.network_wrappers
    algo = params.algorithm
    coach |= {
        "tau": algo.tau,
        "agent's action box": [float(box[0].min()), float(box[1].max())],
        "critics": describe_networks(networks["critic_1"], networks["critic_2"]),
        "actor": describe_network(networks["actor"]),
    }
    spec["policy_kwargs"]["net_arch"] = {
        "pi": list(nets["actor"].middleware.scheme),
        "qf": _one(
            [list(nets[n].middleware.scheme) for n in ("critic_1", "critic_2")], "critic shape"
        ),
    }
    spec["kwargs"]["tau"] = algo.tau
    if isinstance(params, SACAgentParameters):
        sac = params.algorithm
        initial = sac.initial_temperature
        spec["kwargs"] |= {
            "ent_coef": f"auto_{initial}" if sac.learn_temperature else initial,
            "target_entropy": target_entropy,
            "target_update_interval": 1,
        }
        coach |= {
            "target sync every (gradient steps)": 1,  # SACLearner.learn: after every step
            "target entropy": target_entropy,
            "initial temperature": initial,
            "learn temperature": sac.learn_temperature,
            "evaluation greedy": True,  # SAC evaluates with the squashed mean
        }
        return
    td3, exploration = params.algorithm, params.exploration
    _require(isinstance(exploration, AdditiveNoiseParameters), "SB3's TD3: Gaussian noise")
    assert isinstance(exploration, AdditiveNoiseParameters)
    std, last, _ = _linear(exploration.noise_schedule, "noise_schedule")
    _require(std == last, "SB3's NormalActionNoise has a constant std")
    if exploration.noise_as_percentage_from_action_space:
        std *= float(box[1].max() - box[0].min())
    spec["action_noise"] = std
    spec["kwargs"] |= {
        "policy_delay": td3.policy_delay,
        "target_policy_noise": td3.target_policy_noise,
        "target_noise_clip": td3.target_noise_clip,
    }
    coach |= {
        "policy delay": td3.policy_delay,
        "target policy noise": td3.target_policy_noise,
        "target noise clip": td3.target_noise_clip,
        "exploration noise std": std,
        "evaluation greedy": exploration.evaluation_noise == 0.0,
    }
