"""The shapes of JSON values a reader accepts, and the one check of a value against its
shape. A report is read from files made elsewhere (a CI artifact, a baseline): every field
a tool uses is checked here once, at load, so the tools can trust the types they get and a
wrong one is one message naming the field, not a traceback deep in the summary."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable


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


_EXACT_TYPES = {"text": frozenset({str}), "integer": frozenset({int}),
                "boolean": frozenset({bool}), "number": frozenset({int, float})}


def _exact_types(shape: object) -> frozenset | None:
    """The types a value of `shape` may have, when its type alone says (JSON's own types,
    exactly); None when it takes more (a finite float, a list's items, anything)."""
    said = shape.shape if isinstance(shape, Maybe) else shape
    types = _EXACT_TYPES.get(said.name) if isinstance(said, Scalar) and said is not ANYTHING \
        else None
    return None if types is None else types | {type(None)} if said is not shape else types


def _predicate(shape: object) -> Callable[[Any], bool]:
    """A function saying whether a value surely has `shape`, built once per shape. It
    recurses along the shape (a few levels), never along the value, so no value can
    exhaust the stack; it builds no text; it tests JSON's exact types (a subclass, e.g. an
    enum of text, answers False: `check` then walks the value to be sure)."""
    if shape is ANYTHING:
        return lambda value: True
    types = _exact_types(shape)
    if types is not None:
        return lambda value: type(value) in types
    if shape is FINITE:
        return lambda value: type(value) is int or type(value) is float and math.isfinite(value)
    if isinstance(shape, Scalar):
        return shape.holds
    if isinstance(shape, Maybe):
        inner = _predicate(shape.shape)
        return lambda value: value is None or inner(value)
    if isinstance(shape, ListOf):
        if shape.item is ANYTHING:
            return lambda value: type(value) is list
        item = _predicate(shape.item)
        return lambda value: type(value) is list and all(map(item, value))
    if isinstance(shape, MapOf):
        if shape.value is ANYTHING:
            return lambda value: type(value) is dict
        each = _predicate(shape.value)
        return lambda value: type(value) is dict and all(map(each, value.values()))
    table: dict = shape.fields  # type: ignore[attr-defined]
    by_type = [(key, types) for key, inner in table.items()
               if (types := _exact_types(inner)) is not None]
    deeper = [(key, _predicate(inner)) for key, inner in table.items()
              if inner is not ANYTHING and _exact_types(inner) is None]

    def fields_hold(value: Any) -> bool:
        if type(value) is not dict:
            return False
        for key, types in by_type:
            if key in value and type(value[key]) not in types:
                return False
        for key, holds in deeper:
            if key in value and not holds(value[key]):
                return False
        return True
    return fields_hold


# Shapes are module constants: their predicates are built once, kept by the shape's id
# (the shape itself is kept beside it, so the id cannot be reused).
_PREDICATES: dict[int, tuple[object, Callable[[Any], bool]]] = {}


def surely_holds(value: Any, shape: object) -> bool:
    """True when `value` has `shape`, answered fast; False when it does not, or when only
    a walk can tell (`check` walks it and names the place)."""
    known = _PREDICATES.get(id(shape))
    if known is None or known[0] is not shape:
        known = _PREDICATES[id(shape)] = (shape, _predicate(shape))
    return known[1](value)


def check(value: Any, shape: object, where: str) -> None:
    """Raise ShapeError naming `where` (e.g. `'timings'["run"]`) unless `value` has `shape`.
    A value that holds costs one predicate call; any other is walked, iteratively (a
    deeply nested value cannot exhaust the stack), to name the place."""
    if not surely_holds(value, shape):
        walk(value, shape, where)


def walk(value: Any, shape: object, where: str) -> None:
    """`check` the long way: every part of the value, raising at the first that does not
    have its shape."""
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
