"""Level sets: how one preset covers a suite (``coach -p Atari_DQN -lvl breakout``).

A level set maps short names to gymnasium ids: the Atari games ale-py ships
(``breakout`` -> ``ALE/Breakout-v5``), the MuJoCo tasks (``hopper`` -> ``Hopper-v5``), the
Box2D tasks (``bipedalwalker`` -> ``BipedalWalker-v3``), ViZDoom's scenarios
(``health_gathering`` -> ``VizdoomHealthGathering-v1``), the DeepMind Control Suite's tasks
through shimmy (``cartpole_swingup`` -> ``dm_control/cartpole-swingup-v0``) and
gymnasium-robotics' Fetch tasks (``push`` -> ``FetchPush-v4``, ``push_dense`` ->
``FetchPushDense-v4``). Names are matched ignoring case,
``_`` and ``-``; a set's full gymnasium ids are accepted as they are.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import io
import os
import re
from collections.abc import Iterator

import gymnasium as gym

from coach.errors import CoachError

LEVEL_SETS = ("atari", "box2d", "control_suite", "doom", "fetch", "mujoco")

DOOM_SCENARIOS = {
    "basic": "Basic",
    "deadly_corridor": "DeadlyCorridor",
    "deathmatch": "Deathmatch",
    "defend_the_center": "DefendCenter",
    "defend_the_line": "DefendLine",
    "health_gathering": "HealthGathering",
    "health_gathering_supreme": "HealthGatheringSupreme",
    "my_way_home": "MyWayHome",
    "predict_position": "PredictPosition",
    "take_cover": "TakeCover",
}
"""The ``doom`` level set: the original Coach's names of ViZDoom's scenarios -> the middle
of their gymnasium ids (``Vizdoom<Name>-v1``, the discrete-action versions)."""


def _key(name: str) -> str:
    return re.sub(r"[-_ ]", "", name).lower()


def _latest(entry_point_prefix: str) -> dict[str, str]:
    """The newest version of every registered id whose entry point starts with the prefix."""
    newest: dict[str, tuple[int, str]] = {}
    for env_id, spec in gym.registry.items():
        entry = spec.entry_point if isinstance(spec.entry_point, str) else ""
        if not entry.startswith(entry_point_prefix) or spec.namespace is not None:
            continue
        version = spec.version or 0
        if spec.name not in newest or version > newest[spec.name][0]:
            newest[spec.name] = (version, env_id)
    return {name.lower(): env_id for name, (_, env_id) in newest.items()}


@functools.cache
def levels(level_set: str) -> dict[str, str]:
    """The levels of a set: short name (``space_invaders``, ``halfcheetah``) -> gymnasium id."""
    if level_set == "atari":
        try:
            import ale_py
        except ImportError:
            raise CoachError("Atari needs ale-py: pip install 'coach[atari]'") from None
        ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)  # no banner per game
        gym.register_envs(ale_py)
        out = {}
        for rom in ale_py.roms.get_all_rom_ids():
            camel = "".join(part.capitalize() for part in rom.split("_"))
            if f"ALE/{camel}-v5" in gym.registry:
                out[rom] = f"ALE/{camel}-v5"
        return out
    if level_set == "doom":
        try:
            from vizdoom import gymnasium_wrapper  # noqa: F401 - registers the scenarios
        except ImportError:
            raise CoachError("Doom needs vizdoom: pip install 'coach[doom]'") from None
        ids = {name: f"Vizdoom{scenario}-v1" for name, scenario in DOOM_SCENARIOS.items()}
        return {name: env_id for name, env_id in ids.items() if env_id in gym.registry}
    if level_set == "mujoco":
        return _latest("gymnasium.envs.mujoco")
    if level_set == "box2d":
        return _latest("gymnasium.envs.box2d")
    if level_set == "control_suite":
        return _control_suite()
    if level_set == "fetch":
        return _fetch()
    raise CoachError(f"no level set {level_set!r}; level sets: {', '.join(LEVEL_SETS)}")


def _control_suite() -> dict[str, str]:
    os.environ.setdefault("MUJOCO_GL", "egl")  # headless rendering, before dm_control loads
    try:
        import shimmy
    except ImportError:
        raise CoachError("the Control Suite needs dm_control: pip install 'coach[dmc]'") from None
    gym.register_envs(shimmy)
    out = {}
    for env_id in gym.registry:
        match = re.fullmatch(r"dm_control/([A-Za-z_]+)-([a-z0-9_]+)-v0", env_id)
        if match and match.group(1) != "compatibility":  # the suite's tasks, not the wrapper
            out[f"{match.group(1)}_{match.group(2)}".lower()] = env_id
    return out


def _fetch() -> dict[str, str]:
    os.environ.setdefault("MUJOCO_GL", "egl")
    try:
        # The import prints notes on other suites' environments, and warns of no display.
        quiet = io.StringIO()
        with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet), _quiet_glfw():
            import gymnasium_robotics
    except ImportError:
        raise CoachError("Fetch needs gymnasium-robotics: pip install 'coach[fetch]'") from None
    gym.register_envs(gymnasium_robotics)
    out = {}
    for env_id in _latest("gymnasium_robotics.envs.fetch").values():
        words = re.findall(r"[A-Z][a-z]*", gym.registry[env_id].name.removeprefix("Fetch"))
        out["_".join(w.lower() for w in words)] = env_id
    return out


@contextlib.contextmanager
def _quiet_glfw() -> Iterator[None]:
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*DISPLAY.*")
        yield


def same_level(level_set: str | None, name: str, level: str | None) -> bool:
    """Whether ``name`` is ``level``, or another of ``level_set``'s names for it: a run built
    without the CLI (golden and benchmark cases) keeps the preset's ``breakout`` where the CLI
    resolved ``ALE/Breakout-v5``."""
    if name == level:
        return True
    try:
        return level_set is not None and resolve_level(level_set, name) == level
    except CoachError:  # no longer a level of the set
        return False


def resolve_level(level_set: str, name: str) -> str:
    """The gymnasium id of ``name`` in ``level_set``.

    Raises:
        CoachError: naming the close matches and every valid level when there is no such one.
    """
    known = levels(level_set)
    if name in known.values():
        return name
    by_key = {_key(short): short for short in known}
    key = _key(name)
    if key in by_key:
        return known[by_key[key]]
    close = [by_key[k] for k in difflib.get_close_matches(key, list(by_key), n=3, cutoff=0.6)]
    hint = f"did you mean {', '.join(close)}? " if close else ""
    raise CoachError(
        f"no {level_set} level {name!r}; {hint}valid levels: {', '.join(sorted(known))}"
    )
