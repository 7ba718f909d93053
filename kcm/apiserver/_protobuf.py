"""Kubernetes protobuf request bodies, read into the JSON the rest of the server handles.

kubectl 1.32's typed commands send ``application/vnd.kubernetes.protobuf`` (``kubectl create
namespace|configmap|secret|serviceaccount|deployment|job|cronjob|service|ingress|pdb|role|
rolebinding|clusterrole|clusterrolebinding|quota|priorityclass|token``, ``expose``,
``autoscale``, ``auth can-i``, ``drain``'s evictions). A body is the ``k8s\\x00`` envelope
(``runtime.Unknown``: apiVersion, kind, and the object's bytes); the object is decoded with
the layout of its Go struct (:mod:`._protobuf_messages`, generated from Kubernetes' struct
tags) into the JSON Go would write for it:

- ``omitempty`` scalars that are zero are left out, pointer and plain ones are kept (Go's
  protobuf writes every non-pointer field, so a zero on the wire is how an unset plain field
  looks);
- nested structs are kept even when empty (``"resources": {}``), as Go's JSON never omits
  them; inline structs (``IngressRule``'s ``http``) are merged into their parent;
- ``Time`` is RFC 3339 (``null`` when zero), ``MicroTime`` has six fractional digits,
  ``Duration`` is Go's ``1h2m3s``, ``Quantity`` its string, ``IntOrString`` a number or a
  string, ``[]byte`` base64, and ``RawExtension``/``FieldsV1`` the JSON they carry.

A kind the table lacks (newer than the Kubernetes it was generated from) is a 415.
"""

from __future__ import annotations

import base64
import json
import struct
from datetime import UTC, datetime
from typing import Any

from ._protobuf_messages import INLINE, KINDS, MAP, MESSAGES, OMITEMPTY, POINTER, REPEATED

__all__ = ["UnsupportedProtobuf", "decode_protobuf"]

_MAGIC = b"k8s\x00"
_ZERO = ("", 0, False, 0.0)
_PACKABLE = ("int", "bool", "float")
_VARINT_TYPES = frozenset({"int", "bool"})
_SCALARS = frozenset({"string", "bytes", "int", "bool", "float"})


class UnsupportedProtobuf(ValueError):
    """The body is protobuf of a kind (or shape) this decoder does not know."""


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if i >= len(data):
            raise UnsupportedProtobuf("truncated varint")
        byte = data[i]
        i += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, i
        shift += 7


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(number, wire type, value) of each field: ints for varints, bytes otherwise."""
    out: list[tuple[int, int, Any]] = []
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 2:
            length, i = _varint(data, i)
            value = data[i : i + length]
            i += length
        elif wire == 1:
            value, i = data[i : i + 8], i + 8
        elif wire == 5:
            value, i = data[i : i + 4], i + 4
        else:
            raise UnsupportedProtobuf(f"unsupported wire type {wire}")
        out.append((number, wire, value))
    return out


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _packed(data: bytes, typ: str) -> list[Any]:
    """A packed repeated scalar field's items."""
    if typ == "float":
        return [v for (v,) in struct.iter_unpack("<d", data)]
    out: list[Any] = []
    i = 0
    while i < len(data):
        value, i = _varint(data, i)
        out.append(bool(value) if typ == "bool" else _signed(value))
    return out


def _go_duration(nanos: int) -> str:
    """Go's ``time.Duration.String()``: ``1h2m3.5s``, ``150ms``, ``0s``."""
    if nanos == 0:
        return "0s"
    sign, n = ("-" if nanos < 0 else ""), abs(nanos)

    def fraction(value: int, unit: int) -> str:
        whole, rest = divmod(value, unit)
        digits = f"{rest:0{len(str(unit)) - 1}d}".rstrip("0")
        return f"{whole}.{digits}" if digits else str(whole)

    if n < 1_000:
        return f"{sign}{n}ns"
    if n < 1_000_000:
        return f"{sign}{fraction(n, 1_000)}µs"
    if n < 1_000_000_000:
        return f"{sign}{fraction(n, 1_000_000)}ms"
    hours, rest = divmod(n, 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    text = f"{hours}h" if hours else ""
    text += f"{minutes}m" if hours or minutes else ""
    return f"{sign}{text}{fraction(rest, 1_000_000_000)}s"


def _timestamp(data: bytes, *, micro: bool) -> str | None:
    """A ``Timestamp`` (seconds, nanos) as ``metav1.Time``/``MicroTime`` JSON."""
    seconds = nanos = 0
    for number, _wire, value in _fields(data):
        if number == 1:
            seconds = _signed(value)
        elif number == 2:
            nanos = _signed(value)
    if seconds == 0 and nanos == 0:
        return None
    when = datetime.fromtimestamp(seconds, UTC)
    if micro:
        return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{nanos // 1000:06d}Z"
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _special(data: bytes, typ: str) -> Any:
    """The JSON of the message types with a JSON form of their own."""
    fields = {number: value for number, _wire, value in _fields(data)}
    if typ == "quantity":
        return bytes(fields.get(1, b"")).decode() or "0"
    if typ == "intorstring":
        if fields.get(1, 0) == 1:
            return bytes(fields.get(3, b"")).decode()
        return _signed(fields.get(2, 0))
    if typ == "time":
        return _timestamp(data, micro=False)
    if typ == "microtime":
        return _timestamp(data, micro=True)
    if typ == "duration":
        return _go_duration(_signed(fields.get(1, 0)))
    raw = bytes(fields.get(1, b""))  # "raw": RawExtension, FieldsV1
    try:
        return json.loads(raw) if raw else None
    except ValueError as exc:
        raise UnsupportedProtobuf(f"embedded object is not JSON: {exc}") from exc


def _value(wire: int, value: Any, typ: str) -> Any:
    """One value of a field of type ``typ`` (see :mod:`._protobuf_messages`)."""
    if (wire == 0) != (typ in _VARINT_TYPES) and typ != "float":
        raise UnsupportedProtobuf(f"wire type {wire} for a {typ}")
    if typ == "string":
        return bytes(value).decode()
    if typ == "bytes":
        return base64.b64encode(bytes(value)).decode()
    if typ == "int":
        return _signed(value)
    if typ == "bool":
        return bool(value)
    if typ == "float":
        return struct.unpack("<d" if wire == 1 else "<f", value)[0]
    if typ in ("quantity", "intorstring", "time", "microtime", "duration", "raw"):
        return _special(value, typ)
    if typ.startswith("list:"):  # map[string]ExtraValue: a message of repeated "items"
        return [_value(w, v, typ[5:]) for _n, w, v in _fields(value)]
    return _message(value, typ)


def _map_entry(data: bytes, typ: str) -> tuple[str, Any]:
    key, item = "", _value(2, b"", typ)
    for number, wire, value in _fields(data):
        if number == 1:
            key = bytes(value).decode()
        elif number == 2:
            item = _value(wire, value, typ)
    return key, item


def _message(data: bytes, name: str) -> dict[str, Any]:
    schema = {entry[0]: entry for entry in MESSAGES[name]}
    out: dict[str, Any] = {}
    for number, wire, value in _fields(data):
        if number not in schema:
            continue
        _number, field, typ, flags = schema[number]
        try:
            _decode_field(out, field, typ, flags, wire, value)
        except UnsupportedProtobuf as exc:
            raise UnsupportedProtobuf(f"{field}: {exc}") from None
    return out


def _decode_field(
    out: dict[str, Any], field: str, typ: str, flags: int, wire: int, value: Any
) -> None:
    """Add one field's value to ``out``: a map entry, a list item (or a packed run of them),
    an inline struct's fields, or the value itself."""
    if flags & MAP:
        key, item = _map_entry(value, typ)
        out.setdefault(field, {})[key] = item
    elif flags & REPEATED and wire == 2 and typ in _PACKABLE:
        out.setdefault(field, []).extend(_packed(value, typ))
    elif flags & REPEATED:
        out.setdefault(field, []).append(_value(wire, value, typ))
    elif flags & INLINE:
        out.update(_message(value, typ))
    else:
        item = _value(wire, value, typ)
        if item in _ZERO and flags & OMITEMPTY and not flags & POINTER and typ in _SCALARS:
            return  # Go's JSON leaves out an unset plain field
        out[field] = item


def decode_protobuf(body: bytes) -> dict[str, Any]:
    """The JSON form of a protobuf-encoded Kubernetes object.

    Raises:
        UnsupportedProtobuf: not the ``k8s\\x00`` envelope, or a kind this decoder lacks.
    """
    if not body.startswith(_MAGIC):
        raise UnsupportedProtobuf("missing the k8s protobuf envelope")
    api_version = kind = ""
    raw = b""
    for number, _wire, value in _fields(body[len(_MAGIC) :]):
        if number == 1:  # TypeMeta
            for inner, _w, text in _fields(value):
                if inner == 1:
                    api_version = bytes(text).decode()
                elif inner == 2:
                    kind = bytes(text).decode()
        elif number == 2:
            raw = bytes(value)
    message = KINDS.get(f"{api_version}/{kind}") or KINDS.get(f"meta.k8s.io/v1/{kind}")
    if message is None:
        raise UnsupportedProtobuf(f"protobuf bodies of kind {kind!r} are not supported")
    return {"apiVersion": api_version, "kind": kind, **_message(raw, message)}
