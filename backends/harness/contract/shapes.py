"""The shapes of JSON values a reader accepts, and the one check of a value against its
shape. A report is read from files made elsewhere (a CI artifact, a baseline): every field
a tool uses is checked here once, at load, so the tools can trust the types they get and a
wrong one is one message naming the field, not a traceback deep in the summary."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


class ShapeError(ValueError):
    """A value that does not have its shape; str() names where in the value it is."""


@dataclass(frozen=True)
class Scalar:
    """One kind of JSON scalar: text, an integer, a number (an integer or a float, NaN and
    infinity included: reports keep a NaN output's error), a finite number (a duration, a
    size, a time), a boolean."""

    name: str

    def holds(self, value: Any) -> bool:
        if self.name == "text":
            return isinstance(value, str)
        if self.name == "boolean":
            return isinstance(value, bool)
        if isinstance(value, bool):
            return False
        if self.name == "integer":
            return isinstance(value, int)
        if self.name == "finite":
            return isinstance(value, int) or isinstance(value, float) and math.isfinite(value)
        return isinstance(value, (int, float))


TEXT, INTEGER, NUMBER, FINITE, BOOLEAN = (
    Scalar(name) for name in ("text", "integer", "number", "finite", "boolean"))


@dataclass(frozen=True)
class Maybe:
    """The shape, or null."""

    shape: object


@dataclass(frozen=True)
class ListOf:
    item: object


@dataclass(frozen=True)
class MapOf:
    """An object with any keys, each value of one shape."""

    value: object


@dataclass(frozen=True)
class Fields:
    """An object whose named keys, where present, have their shapes (other keys are left
    alone: a newer writer's)."""

    fields: dict


OBJECT = Fields({})        # an object, whatever it holds
ANYTHING = Scalar("any")   # any JSON value: shown as it is, never computed with


def describe(shape: object) -> str:
    if isinstance(shape, Scalar):
        return {"integer": "an integer", "text": "text", "number": "a number",
                "finite": "a finite number", "boolean": "true or false"}[shape.name]
    if isinstance(shape, Maybe):
        return f"{describe(shape.shape)} or null"
    if isinstance(shape, ListOf):
        return "a list"
    return "an object"


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "text", bool: "a boolean",
            type(None): "null"}.get(type(value), "a number")


def check(value: Any, shape: object, where: str) -> None:
    """Raise ShapeError naming `where` (e.g. `'timings'["run"]`) unless `value` has `shape`.
    Iterative, so a deeply nested value cannot exhaust the stack."""
    todo = [(value, shape, where)]
    while todo:
        value, said, where = todo.pop()
        shape = said.shape if isinstance(said, Maybe) else said
        if value is None and shape is not said or shape is ANYTHING:
            continue
        if isinstance(shape, Scalar):
            ok = shape.holds(value)
        elif isinstance(shape, ListOf):
            ok = isinstance(value, list)
            if ok:
                todo.extend((item, shape.item, f"{where}[{index}]")
                            for index, item in enumerate(value))
        else:
            ok = isinstance(value, dict)
            if ok and isinstance(shape, MapOf):
                todo.extend((item, shape.value, f"{where}[{key!r}]") for key, item in value.items())
            elif ok and isinstance(shape, Fields):
                todo.extend((value[key], inner, f"{where}.{key}")
                            for key, inner in shape.fields.items() if key in value)
        if not ok:
            shown = repr(value)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise ShapeError(f"{where} must be {describe(said)}, got {_kind(value)}: {shown}")
