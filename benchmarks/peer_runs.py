"""The processes of `benchmarks.peers`: one whole run of a preset, in Coach or in
Stable-Baselines3, each in a fresh Python process.

    python -m benchmarks.peer_runs coach PRESET EXPERIMENTS_DIR [--seed K]
                                         [--final-agent SEED] [-cp OVERRIDE ...]
    python -m benchmarks.peer_runs sb3 SPEC_JSON

``coach`` runs the ``coach`` command itself (`coach.cli.main`, what the console script
calls) with ``--seed K`` (0 by default) into ``EXPERIMENTS_DIR``, with a clock around
`GraphManager.improve` (heatup, training and the periodic evaluations). ``sb3`` builds the
Stable-Baselines3 model that `benchmarks.sb3_presets` describes in the JSON spec (its
``seed`` included), with ``torch.set_num_threads(1)`` as Coach runs, and times
``model.learn`` (random steps, training and the same evaluations) and the last evaluation
where the learning loop has not run it. Either prints one line ``PEER {...}`` (JSON): the
seconds of that clock, the env steps, gradient steps and evaluations run, the last
evaluation's mean reward and, for SB3, the hyperparameters read back from the model built
(`sb3_settings`).

The final agent, when asked (``--final-agent SEED``; the spec's ``final_evaluation``), is
evaluated after the run and its mean reward reported as ``final_agent``: Coach's last
checkpoint (the one the command writes as it ends) by the golden runner's own evaluation
(`tests.learning.golden_case.evaluate_checkpoint`: a freshly built graph of the preset, 20
greedy episodes seeded with SEED); SB3's model after ``learn`` by its ``evaluate_policy``
(``deterministic=True``) on as many episodes of a ``make_vec_env`` of the preset's env
copies seeded with the same SEED (copy ``i`` with SEED + i).

Nothing beyond the standard library is imported before a side is chosen: the Coach process
never imports SB3, and the SB3 process never imports Coach.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

ACTIVATIONS = ("ReLU", "Tanh", "ELU", "GELU", "LeakyReLU", "SiLU")


def describe_network(*modules: Any) -> str:
    """The linear layers of ``modules`` in order (``in x out``) and the activations between
    them: ``4x256 256x256 256x2 relu``. An activation after the last layer (a squashing
    tanh) is not counted: both sides squash their actions into their box by themselves."""
    layers: list[str] = []
    between: list[str] = []
    pending: list[str] = []
    for module in modules:
        for part in module.modules():
            name = type(part).__name__
            if name == "Linear":
                between += pending
                pending = []
                layers.append(f"{part.in_features}x{part.out_features}")
            elif name in ACTIVATIONS and layers:
                pending.append(name.lower())
    return " ".join([*layers, *dict.fromkeys(between)])


def describe_networks(*networks: Any) -> str:
    """`describe_network` of each of ``networks``; ``2 x (...)`` for identical twins."""
    shapes = [describe_network(n) for n in networks]
    if len(set(shapes)) == 1:
        return f"{len(shapes)} x ({shapes[0]})"
    return " | ".join(shapes)


class CoachLinear:
    """A Coach schedule (linear from ``initial`` to ``final`` over ``decay`` steps, counted
    from ``offset`` env steps on: heatup comes first) as SB3 calls its schedules, with the
    fraction of ``total`` env steps still to go."""

    def __init__(self, initial: float, final: float, decay: int, offset: int, total: int):
        self.initial, self.final, self.decay = initial, final, decay
        self.offset, self.total = offset, total

    def at(self, env_steps: int) -> float:
        """The value after ``env_steps`` env steps of the whole run."""
        step = max(env_steps - self.offset, 0)
        if step >= self.decay:
            return self.final
        return self.initial + step / self.decay * (self.final - self.initial)

    def __call__(self, progress_remaining: float) -> float:
        return self.at(round((1.0 - progress_remaining) * self.total))


def _report(**values: Any) -> None:
    print("PEER " + json.dumps(values), flush=True)


# -- Coach ------------------------------------------------------------------------------------


def run_coach(
    preset: str,
    experiments: str,
    overrides: list[str],
    seed: int = 0,
    final_agent_seed: int | None = None,
) -> int:
    """The ``coach`` command on ``preset``, with `GraphManager.improve` timed; with
    ``final_agent_seed``, the run's last checkpoint evaluated after it."""
    from coach.graph_managers.graph_manager import GraphManager

    improve = GraphManager.improve
    measured: dict[str, Any] = {}

    def timed(graph: GraphManager) -> None:
        start = time.perf_counter()
        improve(graph)
        seconds = time.perf_counter() - start
        last = graph.evaluations[-1] if graph.evaluations else None
        measured.update(
            train_seconds=seconds,
            env_steps=graph.env_steps,
            gradient_steps=graph.training_steps,
            evaluations=len(graph.evaluations),
            final_reward=last.mean_reward if last is not None else math.nan,
        )

    setattr(GraphManager, "improve", timed)  # noqa: B010 (a clock around the real method)
    from coach.cli import main

    arguments = ["-p", preset, "--seed", str(seed), "-ep", experiments]
    for override in overrides:
        arguments += ["-cp", override]
    try:
        main(arguments, prog_name="coach")
    except SystemExit as end:
        if end.code:
            return int(end.code)
    if final_agent_seed is not None:
        measured["final_agent"] = coach_final_agent(preset, Path(experiments), final_agent_seed)
    _report(**measured)
    return 0


def coach_final_agent(preset: str, experiments: Path, seed: int) -> float:
    """The mean reward of the last checkpoint of the one run in ``experiments``, on the
    golden runner's fresh episodes seeded with ``seed``."""
    from coach.checkpoints import LATEST, load_checkpoint
    from tests.learning.golden_case import evaluate_checkpoint

    (marker,) = experiments.glob(f"*/*/checkpoints/{LATEST}")  # NAME/<timestamp>/...
    state = load_checkpoint(marker.parent)
    return float(evaluate_checkpoint(preset, state, seed, threads=1).mean_reward)


# -- Stable-Baselines3 ------------------------------------------------------------------------


def sb3_settings(spec: dict[str, Any], model: Any, gate: Any, evaluation: Any) -> dict[str, Any]:
    """The hyperparameters of the SB3 run as the model built holds them, under the names of
    Coach's settings in `benchmarks.sb3_presets.plan`."""
    algorithm, policy = spec["algorithm"], model.policy
    total, probes = spec["total_timesteps"], spec.get("probes", [])
    optimizers = _optimizers(model)
    rates = {float(group["lr"]) for optimizer in optimizers for group in optimizer.param_groups}
    values: dict[str, Any] = {
        "environment": model.env.get_attr("spec")[0].id,
        "env copies": model.n_envs,
        "discount": model.gamma,
        "optimizer": sorted({type(o).__name__ for o in optimizers}),
        "Adam eps": sorted({float(o.defaults["eps"]) for o in optimizers}),
        "evaluation start (env steps)": gate.last_time_trigger,
        "evaluation period (env steps)": gate.n_steps,
        "evaluation episodes": evaluation.n_eval_episodes,
        "evaluation greedy": evaluation.deterministic,
    }
    if algorithm in ("PPO", "A2C"):
        extractor = policy.mlp_extractor
        values |= {
            "random steps first": 0,
            "steps per copy per block": model.n_steps,
            "GAE lambda": model.gae_lambda,
            "learning rate at probes": [model.lr_schedule(1 - t / total) for t in probes],
            "value coefficient": model.vf_coef,
            "entropy coefficient": model.ent_coef,
            "gradient clip norm": [model.max_grad_norm],
            "normalize advantages": model.normalize_advantage,
            "orthogonal init": policy.ortho_init,
            "actor": describe_network(extractor.policy_net, policy.action_net),
            "critic": describe_network(extractor.value_net, policy.value_net),
        }
        if algorithm == "A2C":  # `A2C.train`: one step on the whole rollout buffer
            return values | {"batch size": model.n_steps * model.n_envs, "epochs": 1}
        return values | {
            "batch size": model.batch_size,
            "epochs": model.n_epochs,
            "clip range at probes": [model.clip_range(1 - t / total) for t in probes],
            "value clip range": model.clip_range_vf,
            "target KL": model.target_kl,
        }
    values |= {
        "batch size": model.batch_size,
        "random steps first": model.learning_starts,
        "env steps between rounds": model.train_freq.frequency,
        "round counted in": model.train_freq.unit.value,
        "gradient steps per round": model.gradient_steps,
        "replay size": model.buffer_size,
        "learning rate": sorted(rates),
        "learning rate at rounds": [
            model.lr_schedule(1 - t / total) for t in spec.get("rate_probes", [])
        ],
    }
    if algorithm == "DQN":
        return values | {
            "gradient clip norm": [model.max_grad_norm],
            "target sync period (env steps)": model.target_update_interval,
            "target sync rate": model.tau,
            "n-step": model.n_steps,
            "epsilon at probes": [model.exploration_schedule(1 - t / total) for t in probes],
            "Q network": describe_network(model.q_net),
        }
    critics = describe_networks(*model.critic.q_networks)
    values |= {
        "gradient clip norm": [None],
        "tau": model.tau,
        "agent's action box": [-1.0, 1.0] if policy.squash_output else None,
        "critics": critics,
    }
    if algorithm == "SAC":
        return values | {
            "target sync every (gradient steps)": model.target_update_interval,
            "target entropy": model.target_entropy,
            "initial temperature": math.exp(float(model.log_ent_coef)),
            "learn temperature": model.ent_coef_optimizer is not None,
            "actor": describe_network(model.actor),
        }
    return values | {
        "policy delay": model.policy_delay,
        "target policy noise": model.target_policy_noise,
        "target noise clip": model.target_noise_clip,
        "exploration noise std": float(model.action_noise._sigma[0]),
        "actor": describe_network(model.actor.mu),
    }


def _optimizers(model: Any) -> list[Any]:
    if hasattr(model.policy, "optimizer") and model.policy.optimizer is not None:
        return [model.policy.optimizer]
    found = [model.actor.optimizer, model.critic.optimizer]
    temperature = getattr(model, "ent_coef_optimizer", None)  # SAC's, when it learns alpha
    return found + ([temperature] if temperature is not None else [])


def build_sb3(spec: dict[str, Any]) -> tuple[Any, Any, Any]:
    """The SB3 model of ``spec``, and the callbacks of its evaluations: the gate that keeps
    Coach's schedule and the `EvalCallback` it calls."""
    import numpy as np
    import stable_baselines3
    import torch
    from stable_baselines3.common.callbacks import EvalCallback, EveryNTimesteps
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.noise import NormalActionNoise

    torch.set_num_threads(1)  # as Coach runs (RunContext.num_threads)
    algorithm, total = spec["algorithm"], spec["total_timesteps"]
    env = make_vec_env(spec["env"], n_envs=spec["n_envs"], seed=spec["seed"])
    evaluation_env = make_vec_env(spec["env"], n_envs=spec["n_envs"], seed=spec["seed"] + 1000)
    kwargs = dict(spec["kwargs"])
    schedules = {
        name: CoachLinear(s[0], s[1], s[2], s[3], total)
        for name, s in spec.get("schedules", {}).items()
    }
    if "train_freq" in kwargs:
        kwargs["train_freq"] = tuple(kwargs["train_freq"])
    if "learning_rate" in schedules:
        kwargs["learning_rate"] = schedules["learning_rate"]
    if "clip_range" in schedules:
        kwargs["clip_range"] = schedules["clip_range"]
    if "action_noise" in spec:
        sigma = spec["action_noise"]
        kwargs["action_noise"] = NormalActionNoise(np.zeros(1), np.full(1, sigma))
    policy_kwargs = dict(spec["policy_kwargs"])
    policy_kwargs["activation_fn"] = getattr(torch.nn, policy_kwargs["activation_fn"])
    if "optimizer_class" in policy_kwargs:
        policy_kwargs["optimizer_class"] = getattr(torch.optim, policy_kwargs["optimizer_class"])
    model = getattr(stable_baselines3, algorithm)(
        "MlpPolicy",
        env,
        policy_kwargs=policy_kwargs,
        seed=spec["seed"],
        device="cpu",
        verbose=0,
        **kwargs,
    )
    if "exploration_rate" in schedules:  # Coach's epsilon: flat through heatup, then linear
        model.exploration_schedule = schedules["exploration_rate"]
    schedule = spec["evaluation"]
    # EvalCallback's own eval_freq counts calls from step 0; Coach's evaluation periods
    # count env steps from the end of heatup: SB3's EveryNTimesteps gates the EvalCallback
    # (which then evaluates at every call it gets) on Coach's schedule.
    evaluation = EvalCallback(
        evaluation_env,
        n_eval_episodes=schedule["episodes"],
        eval_freq=1,
        deterministic=True,
        verbose=0,
    )
    gate = EveryNTimesteps(schedule["period"], evaluation)
    gate.last_time_trigger = schedule["start"]
    return model, gate, evaluation


def sb3_final_agent(spec: dict[str, Any], model: Any) -> float:
    """The mean reward of ``model`` on the spec's ``final_evaluation``: that many greedy
    episodes of a fresh vectorized env of the preset's copies, seeded with its seed."""
    import numpy as np
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy

    final = spec["final_evaluation"]
    env = make_vec_env(spec["env"], n_envs=spec["n_envs"], seed=final["seed"])
    try:
        rewards, _ = evaluate_policy(
            model,
            env,
            n_eval_episodes=final["episodes"],
            deterministic=True,
            return_episode_rewards=True,
        )
    finally:
        env.close()
    return float(np.mean(rewards))


def run_sb3(spec: dict[str, Any]) -> int:
    """Build the SB3 model of ``spec``, time its ``learn`` and the last evaluation; then,
    if the spec asks, evaluate the final agent."""
    model, gate, evaluation = build_sb3(spec)
    settings = sb3_settings(spec, model, gate, evaluation)  # as built, before it learns
    start = time.perf_counter()
    model.learn(total_timesteps=spec["total_timesteps"], callback=gate)
    if gate.last_time_trigger != model.num_timesteps:  # Coach evaluates at the end too
        evaluation.on_step()
    seconds = time.perf_counter() - start
    updates = model._n_updates
    if spec["algorithm"] == "PPO":  # SB3 counts epochs; every epoch takes its minibatches
        updates *= math.ceil(model.n_steps * model.n_envs / model.batch_size)
    final = {"final_agent": sb3_final_agent(spec, model)} if "final_evaluation" in spec else {}
    _report(
        train_seconds=seconds,
        env_steps=model.num_timesteps,
        gradient_steps=updates,
        evaluations=evaluation.n_calls,
        final_reward=float(evaluation.last_mean_reward),
        settings=settings,
        **final,
    )
    return 0


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peer_runs")
    sides = parser.add_subparsers(dest="side", required=True)
    coach = sides.add_parser("coach", help="the coach command on a preset")
    coach.add_argument("preset")
    coach.add_argument("experiments")
    coach.add_argument("--seed", type=int, default=0)
    coach.add_argument("--final-agent", type=int, metavar="SEED", help="evaluate it after")
    coach.add_argument("-cp", dest="overrides", action="append", default=[])
    sb3 = sides.add_parser("sb3", help="the SB3 run of a spec")
    sb3.add_argument("spec", type=json.loads)
    return parser.parse_args(argv)


if __name__ == "__main__":
    args = _arguments(sys.argv[1:])
    if args.side == "coach":
        sys.exit(
            run_coach(args.preset, args.experiments, args.overrides, args.seed, args.final_agent)
        )
    sys.exit(run_sb3(args.spec))
