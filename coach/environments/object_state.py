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
written once and referred to elsewhere, so that what aliased before (PettingZoo's agent
selector iterating the environment's own agent list) aliases after. Each is written whole
where it is reached first breadth-first, by its shortest path (its home: a landmark in
``world.landmarks``, not in ``agent.goal_a``, the landmark an episode of MPE's
simple_adversary drew). `restore_object_state` walks an environment of the same kind (its
episode another) along the homes: it writes each object's attributes in place, so that every
object keeps its identity (the action spaces an adapter hands out get their generators
back), and builds new containers; only then are the references filled in. An object
found at its home that another saved object claimed already cannot be restored:
`UnsaveableState` says where.

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


Step = tuple[str, Any]
"""One step of a path from a value to what it holds: ``("attr", name)``, ``("item", i)``
(of a list or tuple), ``("key", i)``, ``("value", i)`` (of a dict's i-th entry), ``("member",
i)`` (of a set)."""


def _children(value: Any) -> list[tuple[Step, Any]]:
    """What `_Writer.write` writes of ``value``, one step away."""
    kind = type(value)
    if kind in _SCALARS or isinstance(value, enum.Enum | np.generic | np.ndarray):
        return []
    if isinstance(value, np.random.Generator | np.random.RandomState):
        return []
    if kind in (tuple, list):
        return [(("item", i), v) for i, v in enumerate(value)]
    if kind in (set, frozenset):
        return [(("member", i), v) for i, v in enumerate(value)]
    if kind is dict:
        entries = list(value.items())
        keys = [(("key", i), k) for i, (k, _) in enumerate(entries)]
        return keys + [(("value", i), v) for i, (_, v) in enumerate(entries)]
    if hasattr(value, "__dict__") and not _slots(kind):
        return [(("attr", n), v) for n, v in vars(value).items() if not _left_out(n, v)]
    return []


def _homes(root: Any) -> tuple[dict[int, tuple[int, Step]], list[Any]]:
    """Where each value held by ``root`` is reached first breadth-first (the id of what
    holds it and the step), and the values walked (kept alive, so that no id is reused)."""
    homes: dict[int, tuple[int, Step]] = {}
    walked, queue = [root], [root]
    for value in queue:  # grows while it is walked: breadth first
        for step, child in _children(value):
            if id(child) in homes or child is root or type(child) in _SCALARS:
                continue
            homes[id(child)] = (id(value), step)
            walked.append(child)
            queue.append(child)
    return homes, walked


class _Writer:
    def __init__(self, root: Any) -> None:
        self.seen: dict[int, int] = {}
        self.alive: list[Any] = []  # keeps what was seen alive, so that no id is reused
        self.homes, walked = _homes(root)
        self.alive.extend(walked)
        self.whole: set[int] = set()
        """The ids of what is written whole already."""

    def _at_home(self, value: Any, parent: Any, step: Step | None) -> bool:
        """Whether ``value``, reached from ``parent`` by ``step`` (the root: by none), is
        written whole here, rather than referred to."""
        return step is None or self.homes.get(id(value)) == (id(parent), step)

    def write(self, value: Any, path: str, parent: Any = None, step: Step | None = None) -> Any:
        if type(value) in _SCALARS:
            return value
        if isinstance(value, enum.Enum):  # a shared member: named, never written into
            return {"kind": "enum", "type": _type_name(value), "name": value.name}
        if isinstance(value, np.generic):
            if value.dtype.kind not in _ARRAY_KINDS:
                raise UnsaveableState(f"{path} is a numpy {value.dtype} scalar")
            return {"kind": "scalar", "value": np.array(value)}
        if type(value) in (tuple, frozenset):
            kind, what = type(value).__name__, "item" if type(value) is tuple else "member"
            items = [self.write(v, f"{path}[]", value, (what, i)) for i, v in enumerate(value)]
            return {"kind": kind, "items": items}
        ident = self.seen.get(id(value))
        if ident is None:
            ident = self.seen[id(value)] = len(self.seen)
            self.alive.append(value)
        # Whole at its home only (once: a tuple holding it may be written twice), a
        # reference anywhere else, before or after.
        if ident in self.whole or not self._at_home(value, parent, step):
            return {"kind": "ref", "id": ident}
        self.whole.add(ident)
        if type(value) in (list, set):
            kind, what = type(value).__name__, "item" if type(value) is list else "member"
            items = [self.write(v, f"{path}[]", value, (what, i)) for i, v in enumerate(value)]
            return {"kind": kind, "id": ident, "items": items}
        if type(value) is dict:
            entries = list(value.items())
            return {
                "kind": "dict",
                "id": ident,
                "keys": [
                    self.write(k, f"{path} key", value, ("key", i))
                    for i, (k, _) in enumerate(entries)
                ],
                "values": [
                    self.write(v, f"{path}[{k!r}]", value, ("value", i))
                    for i, (k, v) in enumerate(entries)
                ],
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
                name: self.write(v, f"{path}.{name}", value, ("attr", name))
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
    """Two walks of the saved state: `claim` pairs every object written whole with what the
    target holds at the same path (its home) and makes every container, array and
    generator; `read` then fills them in, references included, wherever they stand."""

    def __init__(self) -> None:
        self.made: dict[int, Any] = {}
        self.claimed: dict[int, str] = {}
        """The ids of the target's objects claimed so far, with the paths that claimed them."""

    def claim(self, node: Any, live: Any, path: str) -> None:
        """Pair the values ``node`` writes whole with ``live`` (what the target holds at the
        same path) and below."""
        if not isinstance(node, dict):
            return
        kind = node["kind"]
        if kind in ("tuple", "list"):
            items = live if type(live) in (list, tuple) else ()
            if kind == "list":
                self.made[node["id"]] = []
            for i, item in enumerate(node["items"]):
                self.claim(item, items[i] if i < len(items) else None, f"{path}[{i}]")
        elif kind in ("set", "frozenset"):
            if kind == "set":
                self.made[node["id"]] = set()
            for item in node["items"]:
                self.claim(item, None, f"{path}[]")
        elif kind == "dict":
            self.made[node["id"]] = {}
            live_dict = live if type(live) is dict else {}
            for key_node, value_node in zip(node["keys"], node["values"], strict=True):
                self.claim(key_node, None, f"{path} key")
                key = key_node if not isinstance(key_node, dict) else None
                self.claim(value_node, live_dict.get(key), f"{path}[{key!r}]")
        elif kind == "array":
            self.made[node["id"]] = np.array(node["value"], copy=True)
        elif kind == "generator":
            self.made[node["id"]] = self._generator(node, live)
        elif kind == "random_state":
            random_state = (
                live if isinstance(live, np.random.RandomState) else np.random.RandomState()
            )
            random_state.set_state(node["state"])
            self.made[node["id"]] = random_state
        elif kind == "object":
            if live is None or _type_name(live) != node["type"]:
                found = "nothing" if live is None else f"a {_type_name(live)}"
                raise UnsaveableState(f"{path} held a {node['type']} when saved, here {found}")
            other = self.claimed.setdefault(id(live), path)
            if other != path:
                raise UnsaveableState(f"{path} and {other} held two objects when saved, one here")
            self.made[node["id"]] = live
            attributes = vars(live)
            for name, child in node["attributes"].items():
                self.claim(child, attributes.get(name), f"{path}.{name}")

    def read(self, node: Any, live: Any, path: str) -> Any:
        """The value ``node`` describes (after `claim`); ``live`` is what the target holds at
        the same path."""
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
            out: list[Any] = self.made[node["id"]]
            out.extend(self._items(node["items"], live if type(live) is list else (), path))
            return out
        if kind == "set":
            members: set[Any] = self.made[node["id"]]
            members.update(self._items(node["items"], (), path))
            return members
        if kind == "dict":
            mapping: dict[Any, Any] = self.made[node["id"]]
            live_dict = live if type(live) is dict else {}
            for key_node, value_node in zip(node["keys"], node["values"], strict=True):
                key = self.read(key_node, None, f"{path} key")
                mapping[key] = self.read(value_node, live_dict.get(key), f"{path}[{key!r}]")
            return mapping
        if kind in ("array", "generator", "random_state"):
            return self.made[node["id"]]
        if kind == "object":
            return self._object(node, path)
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
        return generator

    def _object(self, node: dict[str, Any], path: str) -> Any:
        live = self.made[node["id"]]  # the target's object at its home (`claim`)
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
    state: dict[str, Any] = _Writer(root).write(root, "env")
    return state


def restore_object_state(root: object, state: dict[str, Any]) -> None:
    """Put ``root`` (made like the saved object, by the same constructor) into ``state``.

    Raises:
        UnsaveableState: where ``root`` does not have the objects the state was saved from.
    """
    reader = _Reader()
    reader.claim(state, root, "env")
    reader.read(state, root, "env")
