"""An agent's default networks, readably: a table with a column per network (``main``,
``actor``, ``critic_1``, ...) and a row per field of its `NetworkParameters`, each value
written as a reader thinks of it (layer sizes, the head's kind, the learning rate) rather
than as the dataclass's ``repr``.

The rows are the dataclass's own fields, in their order, so that a field added to
`NetworkParameters` gets its row by existing; the fields whose values are parameter
dataclasses themselves (embedders, middleware, heads) are summarized by what they hold."""

from __future__ import annotations

import dataclasses
from typing import Any

from catalogue import table
from parameter_tables import show_default


def _changed(value: Any) -> dict[str, Any]:
    """The fields of the dataclass ``value`` that differ from its class's defaults."""
    fresh = type(value)()
    return {
        f.name: getattr(value, f.name)
        for f in dataclasses.fields(value)
        if getattr(value, f.name) != getattr(fresh, f.name)
    }


def _layers(scheme: list[int]) -> str:
    return ", ".join(map(str, scheme))


def embedder(value: Any) -> str:
    """An input embedder: its convolutions and MLP, or "flattened"."""
    parts = []
    conv = getattr(value, "conv", [])
    if conv:
        parts.append("conv " + ", ".join(f"{c}x{k}/{s}" for c, k, s in conv))
    scheme = getattr(value, "scheme", [])
    if scheme:
        parts.append(f"layers {_layers(scheme)}")
    if not parts:
        parts.append("flattened")
    others = {k: v for k, v in _changed(value).items() if k not in ("conv", "scheme", "activation")}
    if conv or scheme:
        parts.append(f"({value.activation})")
    parts += [f"{k}={show_default(v)}" for k, v in others.items()]
    return " ".join(parts)


def middleware(value: Any) -> str:
    """The middleware: an optional recurrent layer, then the MLP's layer sizes."""
    parts = []
    recurrent = getattr(value, "recurrent", None)
    if recurrent is not None:
        layers = f" x{recurrent.layers}" if recurrent.layers != 1 else ""
        parts.append(f"{recurrent.cell.upper()} {recurrent.size}{layers}, then")
    scheme = getattr(value, "scheme", [])
    parts.append(f"layers {_layers(scheme)} ({value.activation})" if scheme else "no layers")
    others = {
        k: v for k, v in _changed(value).items() if k not in ("scheme", "activation", "recurrent")
    }
    parts += [f"{k}={show_default(v)}" for k, v in others.items()]
    return " ".join(parts)


def head(value: Any) -> str:
    """A head: its kind (the class name without ``HeadParameters``) and what differs from
    that class's defaults."""
    kind = type(value).__name__.removesuffix("Parameters").removesuffix("Head") or "Head"
    changed = ", ".join(f"{k}={show_default(v)}" for k, v in _changed(value).items())
    return f"{kind} ({changed})" if changed else kind


def value_cell(name: str, value: Any) -> str:
    """One field of a network, as its cell shows it."""
    if name == "input_embedders" and isinstance(value, dict):
        return "; ".join(f"`{key}`: {embedder(v)}" for key, v in value.items())
    if name == "middleware" and dataclasses.is_dataclass(value):
        return middleware(value)
    if name == "heads" and isinstance(value, list):
        return ", ".join(head(h) for h in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "none"
    if isinstance(value, str):
        return f"`{value}`"
    return f"`{show_default(value)}`"


def networks_table(networks: dict[str, Any]) -> str:
    """The networks ``networks`` (by name) side by side, a row per field."""
    if not networks:
        return "This agent has no networks.\n"
    first = next(iter(networks.values()))
    names = list(networks)
    rows = [
        [f"`{f.name}`", *(value_cell(f.name, getattr(networks[n], f.name)) for n in names)]
        for f in dataclasses.fields(first)
    ]
    return table(["field", *(f"`{n}`" for n in names)], rows)
