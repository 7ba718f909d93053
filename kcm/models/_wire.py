"""Wire helpers: ``encode``, ``decode``, ``decoder``, ``to_dict``, ``from_dict``.

They differ from calling msgspec directly in three ways: MicroTime fields encode with six
fractional digits and decode to ``MicroTime``; ``Unstructured`` works anywhere a model does;
and ``encode``/``to_dict`` put ``apiVersion`` into top-level kinds (``omit_defaults`` would drop
it, and the API server needs it).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, TypeVar, overload

import msgspec

from kcm.errors import DecodeError

from ._frozen import JSON, FrozenMap
from ._generic import ObjectList, WatchEvent
from ._time import MicroTime, format_micro_time
from ._unstructured import FrozenDict, FrozenList, Unstructured, freeze

__all__ = ["decode", "decoder", "encode", "from_dict", "to_dict"]

T = TypeVar("T")


def _enc_hook(obj: Any) -> Any:
    if isinstance(obj, MicroTime):
        return format_micro_time(obj)
    if isinstance(obj, Unstructured | FrozenDict | FrozenList):
        return obj._data
    raise NotImplementedError(f"cannot encode {type(obj).__name__} objects")


@functools.cache
def _map_converter(tp: Any) -> Callable[[Any], Any] | None:
    """How to build ``tp`` when it is a ``FrozenMap[K, V]`` (None otherwise). Values that JSON
    already decodes to their final type (strings, numbers) are taken as they are; others
    (bytes, times, models, nested containers) are converted, with the same hooks."""
    if getattr(tp, "__origin__", None) is not FrozenMap:
        return None
    key, value = tp.__args__
    if value in (str, int, float, bool):
        return FrozenMap
    target = dict[key, value]  # type: ignore[valid-type]

    def convert(obj: Any) -> Any:
        return FrozenMap(msgspec.convert(obj, target, dec_hook=_dec_hook))

    return convert


def _dec_hook(tp: Any, obj: Any) -> Any:
    convert = _map_converter(tp)
    if convert is not None:
        if not isinstance(obj, dict):
            raise TypeError(f"expected a JSON object, got {type(obj).__name__}")
        return convert(obj)
    if tp is JSON:
        return freeze(obj)
    if tp is MicroTime:
        if isinstance(obj, str):
            try:
                value = msgspec.convert(obj, datetime)
            except msgspec.ValidationError:
                raise ValueError(f"not an RFC 3339 time: {obj!r}") from None
            return MicroTime.from_datetime(value)
        if isinstance(obj, datetime):
            return MicroTime.from_datetime(obj)
        raise TypeError(f"expected an RFC 3339 time string, got {type(obj).__name__}")
    if tp is Unstructured:
        if isinstance(obj, Unstructured):
            return obj
        if isinstance(obj, dict):
            return Unstructured._wrap(obj)
        raise TypeError(f"expected a JSON object, got {type(obj).__name__}")
    raise NotImplementedError(f"cannot decode {tp!r}")


_ENCODER = msgspec.json.Encoder(enc_hook=_enc_hook)


@functools.cache
def _api_version_default(tp: Any) -> str | None:
    """The default apiVersion of a top-level kind, or None when ``tp`` is not one."""
    config = getattr(tp, "__struct_config__", None)
    if config is None or config.tag_field != "kind":
        return None
    for f in msgspec.structs.fields(tp):
        if f.name == "api_version" and isinstance(f.default, str):
            return f.default
    return None


def _list_header(obj: ObjectList[Any]) -> ObjectList[Any]:
    """Fill in apiVersion/kind of a list from its first item, if unset."""
    if (obj.api_version is None or obj.kind is None) and obj.items:
        first = obj.items[0]
        api_version = getattr(first, "api_version", None)
        config = getattr(type(first), "__struct_config__", None)
        kind = getattr(first, "kind", None) if config is None else config.tag
        if api_version and kind and obj.api_version is None and obj.kind is None:
            return msgspec.structs.replace(obj, api_version=api_version, kind=f"{kind}List")
    return obj


def encode(obj: Any) -> bytes:
    """JSON bytes of a model, ``Unstructured``, list, watch event or plain value.

    Top-level kinds always carry ``apiVersion`` (and ``kind``), also as the object of a
    ``WatchEvent``; an ``ObjectList`` without ``apiVersion``/``kind`` gets them from its first
    item and always has ``items``.

    Raises:
        TypeError: ``obj`` contains a value that cannot be encoded.
    """
    if isinstance(obj, WatchEvent):
        return b"".join(
            (b'{"type":', _ENCODER.encode(obj.type), b',"object":', encode(obj.object), b"}")
        )
    if isinstance(obj, ObjectList):
        obj = _list_header(obj)
        data = _ENCODER.encode(obj)
        if not obj.items:
            data = data[:-1] + (b',"items":[]}' if len(data) > 2 else b'"items":[]}')
        return data
    data = _ENCODER.encode(obj)
    default = _api_version_default(type(obj))  # type: ignore[arg-type]
    # msgspec omits a default by identity, not equality: a decoded "v1" is written already.
    if default is not None and obj.api_version is default:
        data = b'{"apiVersion":' + _ENCODER.encode(default) + b"," + data[1:]
    return data


def to_dict(obj: Any) -> Any:
    """``obj`` as JSON-compatible builtins (dicts, lists, str, int, ...), exactly as ``encode``
    would write it (``apiVersion`` included, times as strings, ``fieldsV1`` as a dict).

    Raises:
        TypeError: ``obj`` contains a value that cannot be encoded.
    """
    if isinstance(obj, Unstructured):
        return obj.to_dict()
    return msgspec.json.decode(encode(obj))


@overload
def from_dict(tp: type[T], data: Any) -> T: ...
@overload
def from_dict(tp: Any, data: Any) -> Any: ...
def from_dict(tp: Any, data: Any) -> Any:
    """Build ``tp`` (a model, ``ObjectList[Pod]``, ``Unstructured``, ...) from builtins.

    Accepts the wire form (camelCase keys, RFC 3339 strings) and Python values that encode to
    it (datetimes, models, ``Unstructured``). Goes through JSON, so the result is exactly what
    ``decode`` would give for the same document.

    Raises:
        kcm.errors.DecodeError: ``data`` does not match ``tp`` (the message has the JSON path)
            or holds a value that has no JSON form.
    """
    if tp is Unstructured and isinstance(data, Mapping):
        return Unstructured.from_dict(data)
    try:
        raw = _ENCODER.encode(data)
    except TypeError as exc:
        raise DecodeError(f"cannot build {_type_name(tp)}: {exc}") from exc
    return decode(tp, raw)


@functools.cache
def _cached_decoder(tp: Any) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(tp, dec_hook=_dec_hook)


@overload
def decoder(tp: type[T]) -> msgspec.json.Decoder[T]: ...
@overload
def decoder(tp: Any) -> msgspec.json.Decoder[Any]: ...
def decoder(tp: Any) -> msgspec.json.Decoder[Any]:
    """A cached ``msgspec.json.Decoder`` for ``tp`` with the hooks that MicroTime,
    Unstructured, free-form JSON and ``FrozenMap`` fields need (fields of other types decode
    natively, without a hook).

    Its ``decode`` raises ``msgspec.ValidationError``/``msgspec.DecodeError``; ``decode()``
    below maps them to ``kcm.errors.DecodeError``.
    """
    return _cached_decoder(tp)


@overload
def decode(tp: type[T], data: bytes | str) -> T: ...
@overload
def decode(tp: Any, data: bytes | str) -> Any: ...
def decode(tp: Any, data: bytes | str) -> Any:
    """Decode JSON into ``tp`` (``decode(Pod, body)``, ``decode(ObjectList[Pod], body)``).

    Unknown fields are dropped (use ``Unstructured`` to keep everything).

    Raises:
        kcm.errors.DecodeError: invalid JSON or a value of the wrong type (message keeps
            msgspec's JSON path, e.g. ``at `$.spec.replicas```).
    """
    try:
        return _cached_decoder(tp).decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise DecodeError(f"cannot decode {_type_name(tp)}: {exc}") from exc


def _type_name(tp: Any) -> str:
    return getattr(tp, "__qualname__", None) or repr(tp)
