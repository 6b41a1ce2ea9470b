"""The state of an environment that is a plain Python object, as plain values, and back.

PettingZoo's environments (MPE, the classic games, most third-party ones) keep their whole
episode in Python attributes: dictionaries of rewards and flags, the agent selector, numpy
arrays of positions, the generator their randomness comes from. Neither ``copy.deepcopy``
nor ``pickle`` can save it: most of them are ``EzPickle``, whose pickle holds the
constructor's arguments only (a "copy" is a new environment at its start), and a checkpoint
loads with ``torch.load(weights_only=True)``, which unpickles no objects of other classes.

So `object_state` walks the object graph from the outermost wrapper and writes it down as
dictionaries, lists, numbers, strings and arrays: every object's attributes, every
container's items, every numpy generator's state. Objects and containers reached twice are
written once and referred to after, so that what aliased before (PettingZoo's agent
selector iterating the environment's own agent list) aliases after. `restore_object_state`
walks a freshly made environment of the same kind along the same paths: it writes each
object's attributes in place, so that every object keeps its identity (the action spaces an
adapter hands out get their generators back), and builds new containers.

Enum members are written by name (they are shared, never written into). Left out, on both
sides: functions, classes, modules and dtypes (made by the constructor, not changed by an
episode) and rendering resources (pygame's surfaces, fonts and clocks, and the
attributes that hold a window). Anything else that is no plain value and has no attributes
(a lock, a handle into a C library) cannot be saved: `UnsaveableState` says where it is.
"""

from __future__ import annotations

import enum
import functools
import inspect
import types
from typing import Any

import numpy as np

_SCALARS = (bool, int, float, str, bytes, type(None))
_RENDERING = {"screen", "clock", "viewer", "window", "renderer", "game_font", "renderOn"}
"""Attributes that hold a rendering window or its state, not the episode."""
_BIT_GENERATORS = {
    name: getattr(np.random, name) for name in ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")
}
_ARRAY_KINDS = set("biufc")


class UnsaveableState(Exception):
    """Part of an object's state is no plain value and has no attributes to walk."""


def _left_out(name: str, value: Any) -> bool:
    """Neither saved nor restored: made by the constructor, or a rendering resource."""
    if name in _RENDERING or type(value).__module__.startswith("pygame"):
        return True
    return inspect.isroutine(value) or isinstance(
        value, type | types.ModuleType | np.dtype | functools.partial
    )


class _Writer:
    def __init__(self) -> None:
        self.seen: dict[int, int] = {}
        self.alive: list[Any] = []  # keeps what was seen alive, so that no id is reused

    def write(self, value: Any, path: str) -> Any:
        if type(value) in _SCALARS:
            return value
        if isinstance(value, enum.Enum):  # a shared member: named, never written into
            return {"kind": "enum", "type": _type_name(value), "name": value.name}
        if isinstance(value, np.generic):
            if value.dtype.kind not in _ARRAY_KINDS:
                raise UnsaveableState(f"{path} is a numpy {value.dtype} scalar")
            return {"kind": "scalar", "value": np.array(value)}
        if type(value) in (tuple, frozenset):
            kind = type(value).__name__
            return {"kind": kind, "items": [self.write(v, f"{path}[]") for v in value]}
        ident = self.seen.get(id(value))
        if ident is not None:
            return {"kind": "ref", "id": ident}
        ident = self.seen[id(value)] = len(self.seen)
        self.alive.append(value)
        if type(value) in (list, set):
            kind = type(value).__name__
            return {"kind": kind, "id": ident, "items": [self.write(v, f"{path}[]") for v in value]}
        if type(value) is dict:
            return {
                "kind": "dict",
                "id": ident,
                "keys": [self.write(k, f"{path} key") for k in value],
                "values": [self.write(v, f"{path}[{k!r}]") for k, v in value.items()],
            }
        if isinstance(value, np.ndarray):
            if value.dtype.kind not in _ARRAY_KINDS:
                raise UnsaveableState(f"{path} is a numpy array of {value.dtype}")
            return {"kind": "array", "id": ident, "value": value.copy()}
        if isinstance(value, np.random.Generator):
            return {"kind": "generator", "id": ident, "state": value.bit_generator.state}
        if isinstance(value, np.random.RandomState):
            return {"kind": "random_state", "id": ident, "state": value.get_state(legacy=False)}
        if hasattr(value, "__dict__") and not _slots(type(value)):
            attributes = {
                name: self.write(v, f"{path}.{name}")
                for name, v in vars(value).items()
                if not _left_out(name, v)
            }
            return {
                "kind": "object",
                "id": ident,
                "type": _type_name(value),
                "attributes": attributes,
            }
        raise UnsaveableState(f"{path} is a {_type_name(value)}, which has no attributes to save")


def _slots(cls: type) -> bool:
    """Whether instances of ``cls`` keep attributes in slots (outside ``vars()``)."""
    for klass in cls.__mro__:
        names = vars(klass).get("__slots__", ())
        names = (names,) if isinstance(names, str) else names
        if any(name not in ("__dict__", "__weakref__") for name in names):
            return True
    return False


def _type_name(value: Any) -> str:
    return f"{type(value).__module__}.{type(value).__qualname__}"


class _Reader:
    def __init__(self) -> None:
        self.made: dict[int, Any] = {}

    def read(self, node: Any, live: Any, path: str) -> Any:
        """The value ``node`` describes; ``live`` is what the target holds at the same path."""
        if not isinstance(node, dict):
            return node
        kind = node["kind"]
        if kind == "scalar":
            return np.asarray(node["value"])[()]
        if kind == "tuple":
            items = live if type(live) is tuple else ()
            return tuple(self._items(node["items"], items, path))
        if kind == "frozenset":
            return frozenset(self._items(node["items"], (), path))
        if kind == "ref":
            return self.made[node["id"]]
        if kind == "enum":
            if not (isinstance(live, enum.Enum) and _type_name(live) == node["type"]):
                raise UnsaveableState(f"{path} held a {node['type']} when saved")
            return type(live)[node["name"]]
        if kind == "list":
            out: list[Any] = []
            self.made[node["id"]] = out  # before the items: a list may hold itself
            out.extend(self._items(node["items"], live if type(live) is list else (), path))
            return out
        if kind == "set":
            members: set[Any] = set()
            self.made[node["id"]] = members
            members.update(self._items(node["items"], (), path))
            return members
        if kind == "dict":
            mapping: dict[Any, Any] = {}
            self.made[node["id"]] = mapping
            live_dict = live if type(live) is dict else {}
            for key_node, value_node in zip(node["keys"], node["values"], strict=True):
                key = self.read(key_node, None, f"{path} key")
                mapping[key] = self.read(value_node, live_dict.get(key), f"{path}[{key!r}]")
            return mapping
        if kind == "array":
            array = np.array(node["value"], copy=True)
            self.made[node["id"]] = array
            return array
        if kind == "generator":
            return self._generator(node, live)
        if kind == "random_state":
            random_state = (
                live if isinstance(live, np.random.RandomState) else np.random.RandomState()
            )
            random_state.set_state(node["state"])
            self.made[node["id"]] = random_state
            return random_state
        if kind == "object":
            return self._object(node, live, path)
        raise UnsaveableState(f"{path}: unknown kind of saved value {kind!r}")

    def _items(self, nodes: list[Any], live: Any, path: str) -> list[Any]:
        return [
            self.read(n, live[i] if i < len(live) else None, f"{path}[{i}]")
            for i, n in enumerate(nodes)
        ]

    def _generator(self, node: dict[str, Any], live: Any) -> np.random.Generator:
        name = node["state"]["bit_generator"]
        if name not in _BIT_GENERATORS:
            raise UnsaveableState(f"unknown bit generator {name!r}")
        generator = (
            live
            if isinstance(live, np.random.Generator) and type(live.bit_generator).__name__ == name
            else np.random.Generator(_BIT_GENERATORS[name]())
        )
        generator.bit_generator.state = node["state"]
        self.made[node["id"]] = generator
        return generator

    def _object(self, node: dict[str, Any], live: Any, path: str) -> Any:
        if live is None or _type_name(live) != node["type"]:
            found = "nothing" if live is None else f"a {_type_name(live)}"
            raise UnsaveableState(f"{path} held a {node['type']} when saved, here {found}")
        self.made[node["id"]] = live
        attributes = vars(live)
        saved = node["attributes"]
        for name in [n for n, v in attributes.items() if n not in saved and not _left_out(n, v)]:
            del attributes[name]  # made after the save (a lazily set attribute)
        for name, child in saved.items():
            # Written into the instance's dictionary: no property or __setattr__ runs.
            attributes[name] = self.read(child, attributes.get(name), f"{path}.{name}")
        return live


def object_state(root: object) -> dict[str, Any]:
    """The state of ``root`` and of every object it reaches, as plain values and arrays.

    Raises:
        UnsaveableState: where a value is neither plain nor an object with attributes.
    """
    state: dict[str, Any] = _Writer().write(root, "env")
    return state


def restore_object_state(root: object, state: dict[str, Any]) -> None:
    """Put ``root`` (made like the saved object, by the same constructor) into ``state``.

    Raises:
        UnsaveableState: where ``root`` does not have the objects the state was saved from.
    """
    _Reader().read(state, root, "env")
