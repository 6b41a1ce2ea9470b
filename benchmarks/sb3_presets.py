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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchmarks.peer_runs import describe_network, describe_networks
from coach.agents.clipped_ppo import ClippedPPOAgentParameters
from coach.agents.dqn import DQNAgentParameters
from coach.agents.sac import SACAgentParameters, SACLearner
from coach.agents.td3 import TD3AgentParameters
from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps, StepUnit
from coach.exploration.additive_noise import AdditiveNoiseParameters
from coach.exploration.e_greedy import EGreedyParameters
from coach.graph_managers.basic_rl import BasicRLGraphManager
from coach.graph_managers.parameters import RunContext
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


def plan(name: str, overrides: list[str] | tuple[str, ...] = ()) -> PeerPlan:
    """The SB3 spec and Coach's settings of preset ``name`` with ``overrides`` (``-cp``)."""
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
        "seed": 0,
        "evaluation": evaluation,
        "policy_kwargs": {
            "activation_fn": TORCH_ACTIVATIONS[activation],
            "optimizer_kwargs": {"eps": eps},
        },
    }
    if isinstance(params, ClippedPPOAgentParameters):
        _ppo(params, environment.num_envs, improve, networks, coach, spec)
    else:
        _require(environment.num_envs == 1, "the off-policy peers run one env copy")
        memory = params.memory
        _require(type(memory) is ExperienceReplayParameters, "SB3's replay buffer is uniform")
        assert isinstance(memory, ExperienceReplayParameters)
        period = algo.num_consecutive_playing_steps.num_steps
        total = sb3_total_timesteps(heatup, improve, period)
        rates = [n.learning_rate for n in nets.values()]
        if isinstance(params, SACAgentParameters):
            rates.append(params.algorithm.temperature_learning_rate)
        rate = _one(rates, "learning rate")
        clip = [n.gradient_clip_norm for n in nets.values()]
        coach |= {
            "env steps between rounds": period,
            "round counted in": "step",
            "gradient steps per round": algo.num_consecutive_training_steps,
            "replay size": memory.max_size,
            "learning rate": [rate],
            "gradient clip norm": list(dict.fromkeys(clip)),
        }
        spec["total_timesteps"] = total
        spec["kwargs"] = {
            "learning_rate": rate,
            "buffer_size": memory.max_size,
            "learning_starts": heatup,
            "batch_size": algo.batch_size,
            "gamma": algo.discount,
            "train_freq": [period, "step"],
            "gradient_steps": algo.num_consecutive_training_steps,
        }
        if isinstance(params, DQNAgentParameters):
            _dqn(params, heatup, total, networks, coach, spec)
        else:
            assert isinstance(params, SACAgentParameters | TD3AgentParameters)
            _actor_critic(params, box, target_entropy, networks, coach, spec)
    return PeerPlan(name, algorithm, spec, coach)


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
    spec["schedules"] = {"exploration_rate": [initial, final, decay, heatup]}
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


def _ppo(
    params: ClippedPPOAgentParameters,
    num_envs: int,
    improve: int,
    networks: dict[str, Any],
    coach: dict[str, Any],
    spec: dict[str, Any],
) -> None:
    algo, nets = params.algorithm, params.network_wrappers
    _require({"actor", "critic"} == set(nets), "SB3's PPO: separate actor and critic MLPs")
    _require(not any(n.recurrent for n in nets.values()), "SB3's PPO is feed-forward")
    _require(
        algo.value_clip_range is None and algo.target_kl is None,
        "value clipping and target KL: left out of this mapping",
    )
    length = params.memory.rollout_length  # type: ignore[union-attr]
    block = length * num_envs
    total = (improve // num_envs // length) * block  # the blocks Coach trains on
    probes = [block, total // 2 // block * block, total]
    rate = algo.learning_rate_schedule or ConstantSchedule(
        _one([n.learning_rate for n in nets.values()], "learning rate")
    )
    clip = _one([n.gradient_clip_norm for n in nets.values()], "gradient clip norm")
    spec["total_timesteps"] = total
    spec["probes"] = probes
    spec["schedules"] = {
        "learning_rate": [*_linear(rate, "learning_rate_schedule"), 0],
        "clip_range": [*_linear(algo.clip_range_schedule, "clip_range_schedule"), 0],
    }
    spec["policy_kwargs"] |= {
        "net_arch": {
            "pi": list(nets["actor"].middleware.scheme),
            "vf": list(nets["critic"].middleware.scheme),
        },
        "ortho_init": False,  # Coach initializes as torch does (`coach.networks.model`)
    }
    spec["kwargs"] = {
        "n_steps": length,
        "batch_size": algo.batch_size,
        "n_epochs": algo.epochs,
        "gamma": algo.discount,
        "gae_lambda": algo.gae_lambda,
        "ent_coef": algo.entropy_coefficient,
        "vf_coef": algo.value_coefficient,
        "max_grad_norm": clip if clip is not None else float("inf"),
        "normalize_advantage": algo.normalize_advantages,
        "clip_range_vf": algo.value_clip_range,
        "target_kl": algo.target_kl,
    }
    coach |= {
        "random steps first": 0,  # heatup's random steps are not on-policy data
        "steps per copy per block": length,
        "epochs": algo.epochs,
        "GAE lambda": algo.gae_lambda,
        "learning rate at probes": [rate.value(t) for t in probes],
        "clip range at probes": [algo.clip_range_schedule.value(t) for t in probes],
        "value coefficient": algo.value_coefficient,
        "entropy coefficient": algo.entropy_coefficient,
        "gradient clip norm": [clip],
        "normalize advantages": algo.normalize_advantages,
        "value clip range": algo.value_clip_range,
        "target KL": algo.target_kl,
        "orthogonal init": False,
        "evaluation greedy": True,  # Coach's on-policy evaluation acts with the mode
        "actor": describe_network(networks["actor"]),
        "critic": describe_network(networks["critic"]),
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
