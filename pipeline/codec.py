"""The one codec for the neutral types: dataclasses <-> JSON-ready values, exact in both directions. It stores the
envelope of a conversation that waits (`envelope_to_json`, versioned) and the inbox's events, the outbox's replies and
their thread refs (`to_json`, `from_json`).

Generic over dataclasses, enums, datetimes, tuples and lists, so new optional fields round-trip without codec changes,
and a stored value missing a field that has a default (written before the field existed) reads back with it.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from datetime import datetime
from enum import Enum
from functools import cache
from typing import Any, TypeVar, Union

from pipeline.envelope import Envelope

FORMAT_VERSION = 1
T = TypeVar("T")


class CodecError(ValueError):
    """The stored form cannot be read back (wrong version or shape)."""


def envelope_to_json(envelope: Envelope) -> dict[str, Any]:
    data = _encode(envelope)
    assert isinstance(data, dict)
    return {"version": FORMAT_VERSION, **data}


def envelope_from_json(data: dict[str, Any]) -> Envelope:
    if data.get("version") != FORMAT_VERSION:
        raise CodecError(f"unsupported envelope format version: {data.get('version')!r}")
    body = {k: v for k, v in data.items() if k != "version"}
    try:
        envelope = _decode(Envelope, body)
    except (KeyError, TypeError, ValueError) as exc:
        raise CodecError(f"malformed envelope: {exc}") from exc
    assert isinstance(envelope, Envelope)
    return envelope


def to_json(value: Any) -> Any:
    """A dataclass (or any value of the supported types) as a JSON-ready value."""
    return _encode(value)


def from_json(cls: type[T], data: Any) -> T:
    """The `cls` a `to_json` value stands for; raises `CodecError` when it cannot be read back."""
    try:
        value = _decode(cls, data)
    except (KeyError, TypeError, ValueError) as exc:
        raise CodecError(f"malformed {cls.__name__}: {exc}") from exc
    assert isinstance(value, cls)
    return value


def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {str(_encode(k)): _encode(v) for k, v in value.items()}
    return value


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _decode(tp: Any, value: Any) -> Any:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        if len(inner) != 1:
            raise TypeError(f"ambiguous union {tp}")
        return _decode(inner[0], value)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v) for v in value)
        return tuple(_decode(item, v) for item, v in zip(args, value, strict=True))
    if origin is list:
        return [_decode(args[0], v) for v in value]
    if origin is dict:
        key_tp, val_tp = args
        return {_decode(key_tp, k): _decode(val_tp, v) for k, v in value.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = _hints(tp)
        kwargs = {f.name: _decode(hints[f.name], value[f.name]) for f in dataclasses.fields(tp) if f.name in value}
        return tp(**kwargs)
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp(value)
    if tp is datetime:
        return datetime.fromisoformat(value)
    if tp is float:
        return float(value)
    if tp is int and isinstance(value, float) and value.is_integer():
        return int(value)
    if tp in (str, int, bool):
        if not isinstance(value, tp):
            raise TypeError(f"expected {tp.__name__}, got {type(value).__name__}")
        return value
    if tp is Any:
        return value
    raise TypeError(f"cannot decode type {tp}")
