"""Which PettingZoo environment a multi-agent run uses: `PettingZooEnvironmentParameters`.

The parameters load the environment by ``module:name``, a PettingZoo environment module
(``mpe2:simple_spread_v3``, ``pettingzoo.classic:tictactoe_v3``) whose ``parallel_env()`` or
``env()`` makes one, or any callable that makes one (a class of your own). They build the
adapter of the API chosen: `ParallelPettingZooEnvironment` (every id in play acts at every
step) or `AECPettingZooEnvironment` (the ids take turns). PettingZoo is an optional
dependency, ``pip install coach[multiagent]``, imported only when an environment is made.
"""

from __future__ import annotations

import importlib
import warnings
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from coach import validation as check
from coach.environments.multi_agent import MultiAgentEnvironment
from coach.environments.pettingzoo_aec import AECPettingZooEnvironment
from coach.environments.pettingzoo_base import PettingZooEnvironment
from coach.environments.pettingzoo_parallel import ParallelPettingZooEnvironment
from coach.errors import CoachError
from coach.trust import NAMES_CODE

__all__ = [
    "API_CHOICES",
    "AECPettingZooEnvironment",
    "ParallelPettingZooEnvironment",
    "PettingZooEnvironment",
    "PettingZooEnvironmentParameters",
]

API_CHOICES = ("auto", "parallel", "aec")
"""The values of `PettingZooEnvironmentParameters.api`."""
_FACTORIES = {"parallel": "parallel_env", "aec": "env"}
"""The function of a PettingZoo environment module that makes each API's environment."""
_EXTRA = ("pettingzoo", "mpe2")
_INSTALL = " (PettingZoo and MPE2 come with pip install coach[multiagent])"


@dataclass(slots=True, kw_only=True)
class PettingZooEnvironmentParameters:
    """Which PettingZoo environment to run, through which API, and how many copies of it."""

    env: str = field(metadata=NAMES_CODE)
    """``module:name``: an environment module (``mpe2:simple_spread_v3``) or a callable that
    makes a PettingZoo ``ParallelEnv`` or ``AECEnv`` (``my_package.envs:MyGame``)."""
    kwargs: dict[str, Any] = field(default_factory=dict)
    """Keyword arguments for the environment's constructor (``max_cycles``, ``render_mode``)."""
    num_envs: int = 1
    """How many copies step together (a batch of environments)."""
    api: str = "auto"
    """``parallel``, ``aec``, or ``auto``: parallel where the module has ``parallel_env``, else
    aec (for a callable, the API of the environment it makes)."""
    observation_key: str = "observation"
    """The key a non-dict observation gets in an id's observation dictionary."""

    def validate(self) -> None:
        check.name("env", self.env)
        module_name, _, name = self.env.partition(":")
        if not (module_name and name):
            raise check.InvalidParameter(
                "env", "must be 'module:name', such as 'mpe2:simple_spread_v3'", self.env
            )
        check.whole("num_envs", self.num_envs, 1)
        check.one_of("api", self.api, API_CHOICES)
        check.name("observation_key", self.observation_key)

    def build(self) -> MultiAgentEnvironment:
        """The adapter of the environment's API, with ``num_envs`` copies.

        Raises:
            CoachError: when the environment cannot be loaded or made (see `make_env`).
        """
        adapter: type[PettingZooEnvironment] = (
            ParallelPettingZooEnvironment
            if self.resolved_api() == "parallel"
            else AECPettingZooEnvironment
        )
        return adapter(self.make_env, self.num_envs, self.observation_key)

    def resolved_api(self) -> str:
        """``parallel`` or ``aec``: ``api``, or for ``auto`` the API the environment has (a
        callable's is learned by making one environment)."""
        if self.api != "auto":
            return self.api
        target = self._load()
        if _is_module(target):
            return _module_api(target)
        parallel_env, _ = _pettingzoo()
        env = self._make(target)
        env.close()
        return "parallel" if isinstance(env, parallel_env) else "aec"

    def agent_ids(self) -> tuple[str, ...]:
        """Every id that may act (``possible_agents``), learned by making one environment."""
        env = self.make_env()
        try:
            return tuple(env.possible_agents)
        finally:
            env.close()

    def make_env(self) -> Any:
        """Make one copy: a ``pettingzoo.ParallelEnv`` or ``AECEnv`` as `resolved_api` says
        (PettingZoo's conversions turn a callable's environment of the other API into it).

        Raises:
            CoachError: when the module or name does not exist, the constructor refuses the
                kwargs, or the environment is no PettingZoo environment.
        """
        parallel_env, aec_env = _pettingzoo()
        from pettingzoo.utils.conversions import aec_to_parallel, parallel_to_aec

        env = self._make(self._load())
        if self.api == "parallel" and isinstance(env, aec_env):
            try:
                env = aec_to_parallel(env)
            except AssertionError as error:  # not parallelizable
                raise CoachError(
                    f"{self.env!r} makes an AEC environment that cannot step in parallel "
                    f"({error}); api='aec' would step it turn by turn"
                ) from error
        elif self.api == "aec" and isinstance(env, parallel_env):
            env = parallel_to_aec(env)
        return env

    def _load(self) -> Any:
        """The module or callable ``env`` names."""
        module_name, _, name = self.env.partition(":")
        if not (module_name and name):
            raise CoachError(
                f"environment must be 'module:name', such as 'mpe2:simple_spread_v3', got "
                f"{self.env!r}"
            )
        with warnings.catch_warnings():
            # PettingZoo's classic modules warn that their own creation API is deprecated.
            warnings.filterwarnings("ignore", "The old environment creation", DeprecationWarning)
            try:
                module = importlib.import_module(module_name)
            except ImportError as error:
                hint = _INSTALL if (error.name or "").split(".")[0] in _EXTRA else ""
                raise CoachError(f"cannot load environment {self.env!r}: {error}{hint}") from error
            try:
                return getattr(module, name)
            except AttributeError:
                pass
            try:  # a submodule its package does not import (mpe2's environments)
                return importlib.import_module(f"{module_name}.{name}")
            except ModuleNotFoundError as error:
                if error.name != f"{module_name}.{name}":
                    raise CoachError(f"cannot load environment {self.env!r}: {error}") from error
        raise CoachError(f"cannot load environment {self.env!r}: {module_name} has no {name!r}")

    def _make(self, target: Any) -> Any:
        """An environment from a module's factory for the API or from a callable."""
        parallel_env, aec_env = _pettingzoo()
        if _is_module(target):
            api = self.api if self.api != "auto" else _module_api(target)
            factory = getattr(target, _FACTORIES[api], None)
            if factory is None:
                other = "aec" if api == "parallel" else "parallel"
                raise CoachError(
                    f"environment {self.env!r} has no {_FACTORIES[api]}() for the {api} API; "
                    f"api={other!r} would use its {_FACTORIES[other]}()"
                )
        elif callable(target):
            factory = target
        else:
            raise CoachError(
                f"environment {self.env!r} is a {type(target).__name__}, neither an "
                f"environment module nor a callable that makes an environment"
            )
        try:
            env = factory(**self.kwargs)
        except (TypeError, ValueError, AssertionError, KeyError, ImportError) as error:
            raise CoachError(
                f"cannot make environment {self.env!r} with kwargs {self.kwargs}: {error}"
            ) from error
        if not isinstance(env, parallel_env | aec_env):
            raise CoachError(
                f"environment {self.env!r} made a {type(env).__name__}, not a PettingZoo "
                f"ParallelEnv or AECEnv"
            )
        return env


def _is_module(target: Any) -> bool:
    """An environment module (or PettingZoo's stand-in for a deprecated one), not a maker."""
    return isinstance(target, ModuleType) or (
        not callable(target) and any(hasattr(target, name) for name in _FACTORIES.values())
    )


def _module_api(module: Any) -> str:
    """The API ``auto`` picks in an environment module: parallel where it has one."""
    return "parallel" if hasattr(module, _FACTORIES["parallel"]) else "aec"


def _pettingzoo() -> tuple[type, type]:
    """PettingZoo's ``ParallelEnv`` and ``AECEnv`` classes.

    Raises:
        CoachError: when PettingZoo is not installed.
    """
    try:
        from pettingzoo import AECEnv, ParallelEnv
    except ImportError as error:
        raise CoachError(f"multi-agent environments need PettingZoo{_INSTALL}") from error
    return ParallelEnv, AECEnv
