"""Saving and restoring the episode in flight of one gymnasium environment.

Classic control environments are plain Python objects: their physical state, a handful of
counters and the generator their randomness comes from. MuJoCo environments are their
positions, velocities, simulation time and generator. Atari environments are ALE's cloned
emulator state, its random generator included. (ALE does not put the last action in that
state, so with sticky actions the first steps after a restore may repeat a different action
than the original run would have: the episode continues, not bit for bit.) Environments that expose
``get_state()`` / ``set_state(state)`` themselves are asked directly. For any other
environment `get_env_state` returns ``None``: its episodes restart after a restore.

The time limit's elapsed steps are saved with the state, so a restored episode is truncated
where the original would have been.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

_PLAIN = (np.ndarray, bool, int, float, type(None), np.generic)


def _plain(value: Any) -> bool:
    """A value saved as it is: arrays, numbers, and tuples or lists of them."""
    if isinstance(value, tuple | list):
        return all(_plain(v) for v in value)
    return isinstance(value, _PLAIN)


_SKIP = {"screen", "clock", "viewer", "renderer", "mujoco_renderer", "spec", "render_mode"}


def _time_limits(env: gym.Env) -> list[gym.wrappers.TimeLimit]:
    out = []
    while isinstance(env, gym.Wrapper):
        if isinstance(env, gym.wrappers.TimeLimit):
            out.append(env)
        env = env.env
    return out


def _wrappers_with_state(env: gym.Env) -> list[Any]:
    """Wrappers that keep state of their own (``get_wrapper_state``), outermost first."""
    out = []
    while isinstance(env, gym.Wrapper):
        if callable(getattr(env, "get_wrapper_state", None)):
            out.append(env)
        env = env.env
    return out


def _family(unwrapped: gym.Env) -> str | None:
    if (
        callable(getattr(unwrapped, "get_state", None))
        and callable(getattr(unwrapped, "set_state", None))
        and not hasattr(unwrapped, "data")
    ):
        return "own"
    module = type(unwrapped).__module__
    if module.startswith("gymnasium.envs.classic_control"):
        return "classic_control"
    if module.startswith("ale_py") and hasattr(unwrapped, "clone_state"):
        return "atari"
    if module.startswith("gymnasium.envs.mujoco") and hasattr(unwrapped, "data"):
        return "mujoco"
    return None


def get_env_state(env: gym.Env) -> dict[str, Any] | None:
    """The state of ``env``'s current episode, or ``None`` where it cannot be saved."""
    unwrapped = env.unwrapped
    family = _family(unwrapped)
    if family is None:
        return None
    state: dict[str, Any] = {
        "family": family,
        "elapsed_steps": [t._elapsed_steps for t in _time_limits(env)],
        "rng": unwrapped.np_random.bit_generator.state,
        "wrappers": [w.get_wrapper_state() for w in _wrappers_with_state(env)],
    }
    if family == "own":
        state["own"] = unwrapped.get_state()  # type: ignore[attr-defined]
    elif family == "atari":
        # The emulator with its own generator (sticky actions), as ALE serializes it.
        ale_state = unwrapped.clone_state(include_rng=True)  # type: ignore[attr-defined]
        state["ale"] = np.frombuffer(ale_state.serialize(), dtype=np.uint8).copy()
    elif family == "classic_control":
        state["attributes"] = {
            k: (v.copy() if isinstance(v, np.ndarray) else v)
            for k, v in vars(unwrapped).items()
            if _plain(v) and k not in _SKIP and not k.startswith("_np_random")
        }
    else:  # mujoco
        data = unwrapped.data  # type: ignore[attr-defined]
        state["qpos"] = data.qpos.copy()
        state["qvel"] = data.qvel.copy()
        state["time"] = float(data.time)
    return state


def set_env_state(env: gym.Env, state: dict[str, Any]) -> None:
    """Put ``env`` (already reset once) back into a state from `get_env_state`."""
    unwrapped = env.unwrapped
    family = state["family"]
    if family == "own":
        unwrapped.set_state(state["own"])  # type: ignore[attr-defined]
    elif family == "atari":
        import ale_py

        unwrapped.restore_state(ale_py.ALEState(state["ale"].tobytes()))  # type: ignore[attr-defined]
    elif family == "classic_control":
        for key, value in state["attributes"].items():
            setattr(unwrapped, key, value.copy() if isinstance(value, np.ndarray) else value)
    else:
        unwrapped.set_state(state["qpos"], state["qvel"])  # type: ignore[attr-defined]
        unwrapped.data.time = state["time"]  # type: ignore[attr-defined]
    unwrapped.np_random.bit_generator.state = state["rng"]
    for limit, elapsed in zip(_time_limits(env), state["elapsed_steps"], strict=False):
        limit._elapsed_steps = elapsed
    for wrapper, wrapper_state in zip(
        _wrappers_with_state(env), state.get("wrappers", []), strict=False
    ):
        wrapper.set_wrapper_state(wrapper_state)
