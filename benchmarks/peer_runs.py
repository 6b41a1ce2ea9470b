"""The timed processes of `benchmarks.peers`: one whole run of a preset, in Coach or in
Stable-Baselines3, each in a fresh Python process.

    python -m benchmarks.peer_runs coach PRESET EXPERIMENTS_DIR [-cp OVERRIDE ...]
    python -m benchmarks.peer_runs sb3 SPEC_JSON

``coach`` runs the ``coach`` command itself (`coach.cli.main`, what the console script
calls) with ``--seed 0`` into ``EXPERIMENTS_DIR``, with a clock around
`GraphManager.improve` (heatup, training and the periodic evaluations). ``sb3`` builds the
Stable-Baselines3 model that `benchmarks.sb3_presets` describes in the JSON spec, with
``torch.set_num_threads(1)`` as Coach runs, and times ``model.learn`` (random steps,
training and the same evaluations) and the last evaluation where the learning loop has not
run it. Either prints one line ``PEER {...}`` (JSON): the seconds of that clock, the env
steps, gradient steps and evaluations run, the last evaluation's mean reward and, for SB3,
the hyperparameters read back from the model built (`sb3_settings`).

Nothing beyond the standard library is imported before a side is chosen: the Coach process
never imports SB3, and the SB3 process never imports Coach.
"""

from __future__ import annotations

import json
import math
import sys
import time
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


def run_coach(preset: str, experiments: str, overrides: list[str]) -> int:
    """The ``coach`` command on ``preset``, with `GraphManager.improve` timed."""
    from coach.graph_managers.graph_manager import GraphManager

    improve = GraphManager.improve

    def timed(graph: GraphManager) -> None:
        start = time.perf_counter()
        improve(graph)
        seconds = time.perf_counter() - start
        last = graph.evaluations[-1] if graph.evaluations else None
        _report(
            train_seconds=seconds,
            env_steps=graph.env_steps,
            gradient_steps=graph.training_steps,
            evaluations=len(graph.evaluations),
            final_reward=last.mean_reward if last is not None else math.nan,
        )

    setattr(GraphManager, "improve", timed)  # noqa: B010 (a clock around the real method)
    from coach.cli import main

    arguments = ["-p", preset, "--seed", "0", "-ep", experiments]
    for override in overrides:
        arguments += ["-cp", override]
    try:
        main(arguments, prog_name="coach")
    except SystemExit as end:
        return int(end.code or 0)
    return 0


# -- Stable-Baselines3 ------------------------------------------------------------------------


def sb3_settings(spec: dict[str, Any], model: Any, gate: Any, evaluation: Any) -> dict[str, Any]:
    """The hyperparameters of the SB3 run as the model built holds them, under the names of
    Coach's settings in `benchmarks.sb3_presets.plan`."""
    algorithm, policy = spec["algorithm"], model.policy
    total, probes = spec["total_timesteps"], spec.get("probes", [])
    rates = {
        float(group["lr"]) for optimizer in _optimizers(model) for group in optimizer.param_groups
    }
    values: dict[str, Any] = {
        "environment": model.env.get_attr("spec")[0].id,
        "env copies": model.n_envs,
        "discount": model.gamma,
        "batch size": model.batch_size,
        "Adam eps": sorted({float(o.defaults["eps"]) for o in _optimizers(model)}),
        "evaluation start (env steps)": gate.last_time_trigger,
        "evaluation period (env steps)": gate.n_steps,
        "evaluation episodes": evaluation.n_eval_episodes,
        "evaluation greedy": evaluation.deterministic,
    }
    if algorithm == "PPO":
        lr = [model.lr_schedule(1 - t / total) for t in probes]
        clip = [model.clip_range(1 - t / total) for t in probes]
        extractor = policy.mlp_extractor
        return values | {
            "random steps first": 0,
            "steps per copy per block": model.n_steps,
            "epochs": model.n_epochs,
            "GAE lambda": model.gae_lambda,
            "learning rate at probes": lr,
            "clip range at probes": clip,
            "value coefficient": model.vf_coef,
            "entropy coefficient": model.ent_coef,
            "gradient clip norm": [model.max_grad_norm],
            "normalize advantages": model.normalize_advantage,
            "value clip range": model.clip_range_vf,
            "target KL": model.target_kl,
            "orthogonal init": policy.ortho_init,
            "actor": describe_network(extractor.policy_net, policy.action_net),
            "critic": describe_network(extractor.value_net, policy.value_net),
        }
    values |= {
        "random steps first": model.learning_starts,
        "env steps between rounds": model.train_freq.frequency,
        "round counted in": model.train_freq.unit.value,
        "gradient steps per round": model.gradient_steps,
        "replay size": model.buffer_size,
        "learning rate": sorted(rates),
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


def run_sb3(spec: dict[str, Any]) -> int:
    """Build the SB3 model of ``spec``, time its ``learn`` and the last evaluation."""
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
    if algorithm == "PPO":
        kwargs["learning_rate"] = schedules["learning_rate"]
        kwargs["clip_range"] = schedules["clip_range"]
    if "action_noise" in spec:
        sigma = spec["action_noise"]
        kwargs["action_noise"] = NormalActionNoise(np.zeros(1), np.full(1, sigma))
    policy_kwargs = dict(spec["policy_kwargs"])
    policy_kwargs["activation_fn"] = getattr(torch.nn, policy_kwargs["activation_fn"])
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
    settings = sb3_settings(spec, model, gate, evaluation)  # as built, before it learns
    start = time.perf_counter()
    model.learn(total_timesteps=total, callback=gate)
    if gate.last_time_trigger != model.num_timesteps:  # Coach evaluates at the end too
        evaluation.on_step()
    seconds = time.perf_counter() - start
    updates = model._n_updates
    if algorithm == "PPO":  # SB3 counts epochs; every epoch takes its minibatches
        updates *= math.ceil(model.n_steps * model.n_envs / model.batch_size)
    _report(
        train_seconds=seconds,
        env_steps=model.num_timesteps,
        gradient_steps=updates,
        evaluations=evaluation.n_calls,
        final_reward=float(evaluation.last_mean_reward),
        settings=settings,
    )
    return 0


if __name__ == "__main__":
    side, *rest = sys.argv[1:]
    if side == "coach":
        preset, experiments, *options = rest
        sys.exit(run_coach(preset, experiments, options[1::2]))
    sys.exit(run_sb3(json.loads(rest[0])))
