"""Decode a parsed JSON body into a built-in kind the way Go's ``encoding/json`` does.

kube-apiserver decodes every write into the kind's Go struct and writes back what that struct
holds, so what it stores is always something a Go client can read:

- fields the struct does not have are dropped (``fieldValidation`` is off in 1.24);
- a key given twice is decoded twice into the same field: maps and structs merge, scalars and
  lists take the last value;
- a value of the wrong JSON type is refused with Go's message, naming the innermost struct and
  the field path: ``json: cannot unmarshal string into Go struct field
  DeploymentSpec.spec.replicas of type int32`` (the first such error; decoding goes on);
- ``int32`` fields refuse 2^31 and fractions (``number 1.5``), ``[]byte`` takes only base64,
  times must parse as RFC 3339 (``MicroTime``: six fractional digits) and are written in UTC,
  quantities are parsed and written in canonical form, an IntOrString takes a string or an
  int32; their errors stop decoding at once, as Go's ``UnmarshalJSON`` methods do;
- a ``false`` in a plain ``bool`` tagged ``omitempty`` (``spec.paused``) is not written back.
"""

from __future__ import annotations

import base64
from typing import Any, Final, NoReturn

from ._go_json import JsonFloat, JsonObject
from ._go_quantity import QuantityError, canonical_quantity
from ._go_time import RFC3339, RFC3339_MICRO, TimeParseError, format_time, parse_time
from ._go_types import GoType, go_fields

__all__ = ["DecodeFailure", "decode_typed", "free_form"]

_INT_RANGES: Final = {"int32": 2**31, "int64": 2**63}
_B64: Final = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


class DecodeFailure(ValueError):
    """The body does not decode into the kind; the message is Go's."""


class _Omit:
    """Nothing decoded: leave the field as it was (Go leaves a field it cannot set alone)."""


_OMIT: Final = _Omit()
_REMOVE: Final = object()
"""A JSON null for a map, list, pointer or free-form field: the field is unset."""


def _json_kind(value: Any) -> str:
    """How Go's type errors name a JSON value: ``string``, ``number``, ``bool``, ..."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list) and not isinstance(value, JsonObject):
        return "array"
    return "object"


def _literal(value: Any) -> str:
    return value.literal if isinstance(value, JsonFloat) else str(value)


def free_form(value: Any) -> Any:
    """A free-form JSON value as plain Python (a duplicate key: the last value wins)."""
    if isinstance(value, JsonObject):
        return {k: free_form(v) for k, v in value}
    if isinstance(value, dict):
        return {k: free_form(v) for k, v in value.items()}
    if isinstance(value, list):
        return [free_form(v) for v in value]
    if isinstance(value, JsonFloat):
        return float(value)
    return value


def _pairs(value: Any) -> list[tuple[str, Any]]:
    return list(value) if isinstance(value, JsonObject) else list(value.items())


def _is_object(value: Any) -> bool:
    return isinstance(value, JsonObject | dict)


def _go_base64(text: str) -> bytes:
    """Go's ``base64.StdEncoding.DecodeString``: newlines skipped, padding required.

    Raises:
        DecodeFailure: ``illegal base64 data at input byte N``, N as Go reports it.
    """
    src = text.encode()
    out = bytearray()
    si = 0

    def corrupt(at: int) -> DecodeFailure:
        return DecodeFailure(f"illegal base64 data at input byte {at}")

    while si < len(src):
        quantum: list[int] = []
        trailing: DecodeFailure | None = None
        while len(quantum) < 4:
            if si == len(src):
                if not quantum:
                    return bytes(out)
                raise corrupt(si - len(quantum))
            c = src[si]
            si += 1
            if c in _B64:
                quantum.append(c)
                continue
            if c in b"\r\n":
                continue
            if c != ord("=") or len(quantum) < 2:
                raise corrupt(si - 1)
            if len(quantum) == 2:  # "==" expected; the first "=" is consumed
                while si < len(src) and src[si] in b"\r\n":
                    si += 1
                if si == len(src):
                    raise corrupt(len(src))
                if src[si] != ord("="):
                    raise corrupt(si - 1)
                si += 1
            while si < len(src) and src[si] in b"\r\n":
                si += 1
            if si < len(src):
                trailing = corrupt(si)
            break
        chunk = bytes(quantum) + b"=" * (4 - len(quantum))
        out.extend(base64.b64decode(chunk))
        if trailing is not None:
            raise trailing
        if len(quantum) < 4:
            break
    return bytes(out)


_MISMATCH: Final = object()
"""A value of the wrong JSON type for the field."""


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _string(decoder: _Decoder, tp: GoType, value: Any, ctx: tuple[str, str]) -> Any:
    return value if isinstance(value, str) else _MISMATCH


def _bool(decoder: _Decoder, tp: GoType, value: Any, ctx: tuple[str, str]) -> Any:
    return value if isinstance(value, bool) else _MISMATCH


def _float(decoder: _Decoder, tp: GoType, value: Any, ctx: tuple[str, str]) -> Any:
    if not _is_number(value):
        return _MISMATCH
    return int(value) if isinstance(value, float) and value.is_integer() else value


class _Decoder:
    """One decode: the first type error is kept and reported at the end; the errors of Go's
    ``UnmarshalJSON`` methods (times, quantities, IntOrString) stop it at once."""

    def __init__(self) -> None:
        self.saved: str | None = None

    def type_error(self, value: Any, go_name: str, ctx: tuple[str, str], literal: bool) -> None:
        shown = f"number {_literal(value)}" if literal else _json_kind(value)
        struct, path = ctx
        message = (
            f"json: cannot unmarshal {shown} into Go struct field {struct}.{path} of type {go_name}"
            if struct or path
            else f"json: cannot unmarshal {shown} into Go value of type {go_name}"
        )
        if self.saved is None:
            self.saved = message

    def abort(self, value: Any, go_name: str, ctx: tuple[str, str], literal: bool) -> NoReturn:
        self.type_error(value, go_name, ctx, literal)
        message, self.saved = self.saved, None
        raise DecodeFailure(message)

    def value(self, tp: GoType, value: Any, ctx: tuple[str, str], existing: Any) -> Any:
        """The decoded ``value`` (``existing``: what the field holds already)."""
        if value is None:
            scalar = tp.kind in ("string", "bool", "int32", "int64", "float64", "intorstring")
            return _OMIT if scalar else _REMOVE
        kind = tp.kind
        if kind == "struct":
            return self.struct(tp, value, ctx, existing)
        if kind == "map":
            return self.map(tp, value, ctx, existing)
        if kind == "list":
            return self.list(tp, value, ctx, existing)
        if kind == "any":
            return free_form(value)
        return self.scalar(tp, value, ctx)

    def scalar(self, tp: GoType, value: Any, ctx: tuple[str, str]) -> Any:
        """A leaf value; a type error leaves the field unset (:data:`_OMIT`)."""
        decoded = _SCALARS[tp.kind](self, tp, value, ctx)
        if decoded is _MISMATCH:
            self.type_error(value, tp.name, ctx, literal=False)
            return _OMIT
        return decoded

    def integer(self, tp: GoType, value: Any, ctx: tuple[str, str]) -> Any:
        if not _is_number(value):
            return _MISMATCH
        limit = _INT_RANGES[tp.kind]
        if isinstance(value, int) and -limit <= value < limit:
            return value
        self.type_error(value, tp.name, ctx, literal=True)
        return _OMIT

    def int_or_string(self, tp: GoType, value: Any, ctx: tuple[str, str]) -> Any:
        """``intstr.IntOrString``: a string, else an int32 (its own ``UnmarshalJSON``)."""
        if isinstance(value, str):
            return value
        if isinstance(value, int) and _is_number(value) and -(2**31) <= value < 2**31:
            return value
        self.abort(value, "int32", ctx, literal=_is_number(value))

    def time(self, tp: GoType, value: Any, ctx: tuple[str, str]) -> Any:
        """``metav1.Time``/``MicroTime``: an RFC 3339 string, written back in UTC."""
        if not isinstance(value, str):
            self.abort(value, "string", ctx, literal=False)
        layout = RFC3339_MICRO if tp.kind == "microtime" else RFC3339
        try:
            return format_time(parse_time(value, layout), layout)
        except TimeParseError as exc:
            raise DecodeFailure(str(exc)) from None

    def bytes(self, tp: GoType, value: Any, ctx: tuple[str, str]) -> Any:
        """``[]byte``: base64; a bad one is kept as the error, as Go saves it."""
        if not isinstance(value, str):
            return _MISMATCH
        try:
            return base64.b64encode(_go_base64(value)).decode()
        except DecodeFailure as exc:
            if self.saved is None:
                self.saved = str(exc)
            return _OMIT

    def quantity(self, tp: GoType, value: Any, ctx: tuple[str, str]) -> Any:
        """``resource.Quantity``: its JSON text (string or number) parsed, canonical."""
        if isinstance(value, str):
            text = value
        elif _is_number(value):
            text = _literal(value)
        else:
            text = "true" if value is True else "false" if value is False else "{...}"
        try:
            return canonical_quantity(text, milli=tp.name == "resource-list-item")
        except QuantityError as exc:
            raise DecodeFailure(str(exc)) from None

    def struct(self, tp: GoType, value: Any, ctx: tuple[str, str], existing: Any) -> Any:
        if not _is_object(value):
            self.type_error(value, tp.name, ctx, literal=False)
            return _OMIT
        fields = go_fields(tp.model)
        out: dict[str, Any] = dict(existing) if isinstance(existing, dict) else {}
        prefix = f"{ctx[1]}." if ctx[1] else ""
        for key, item in _pairs(value):
            field = fields.get(key)
            if field is None:
                continue  # unknown fields are dropped
            decoded = self.value(field.type, item, (tp.model.__name__, prefix + key), out.get(key))
            if decoded is _REMOVE or (field.omit_false and decoded is False):
                out.pop(key, None)
            elif decoded is not _OMIT:
                out[key] = decoded
        return out

    def map(self, tp: GoType, value: Any, ctx: tuple[str, str], existing: Any) -> Any:
        if not _is_object(value):
            self.type_error(value, tp.name, ctx, literal=False)
            return _OMIT
        assert tp.item is not None
        out: dict[str, Any] = dict(existing) if isinstance(existing, dict) else {}
        for key, item in _pairs(value):
            out[key] = _zero_if_unset(tp.item, self.value(tp.item, item, ctx, None))
        return out

    def list(self, tp: GoType, value: Any, ctx: tuple[str, str], existing: Any) -> Any:
        if not isinstance(value, list) or isinstance(value, JsonObject):
            self.type_error(value, tp.name, ctx, literal=False)
            return _OMIT
        assert tp.item is not None
        before = existing if isinstance(existing, list) else []
        out: list[Any] = []
        for i, item in enumerate(value):
            old = before[i] if i < len(before) else None
            decoded = self.value(tp.item, item, ctx, old)
            out.append(old if decoded is _OMIT and old is not None else decoded)
            out[-1] = _zero_if_unset(tp.item, out[-1])
        return out


_SCALARS: Final = {
    "string": _string,
    "bool": _bool,
    "float64": _float,
    "int32": _Decoder.integer,
    "int64": _Decoder.integer,
    "intorstring": _Decoder.int_or_string,
    "time": _Decoder.time,
    "microtime": _Decoder.time,
    "bytes": _Decoder.bytes,
    "quantity": _Decoder.quantity,
}


def _zero_if_unset(tp: GoType, decoded: Any) -> Any:
    """A map value or list item that null (or an error) left unset: Go's zero value."""
    if decoded is not _OMIT and decoded is not _REMOVE:
        return decoded
    zeros = {"string": "", "bool": False, "int32": 0, "int64": 0, "struct": {}, "quantity": "0"}
    return zeros.get(tp.kind)


def decode_typed(model: type[Any], value: Any) -> dict[str, Any]:
    """``value`` (a parsed JSON object) decoded into ``model`` as Go would, back as JSON.

    Raises:
        DecodeFailure: ``value`` does not decode (Go's message: the first type error, or the
            error of a value that does not parse).
    """
    decoder = _Decoder()
    out = decoder.struct(GoType("struct", model.__name__, model=model), value, ("", ""), None)
    if decoder.saved is not None:
        raise DecodeFailure(decoder.saved)
    if out is _OMIT:
        raise DecodeFailure(f"json: cannot unmarshal {_json_kind(value)} into Go value")
    result: dict[str, Any] = out
    return result
