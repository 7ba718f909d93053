"""An OpenAPI v2 document as gnostic's ``openapi_v2.Document`` protobuf, the form kubectl reads.

kubectl asks ``/openapi/v2`` for ``application/com.github.proto-openapi.spec.v2@v1.0+protobuf``
and parses nothing else. Only what kubectl's ``proto.NewOpenAPIData`` reads is encoded: the
swagger version, info, an empty ``paths`` and every definition (reference, format,
description, required fields, type, items, additional properties, properties and vendor
extensions, whose values gnostic keeps as YAML text). Field numbers are gnostic's
``OpenAPIv2.proto``.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["encode_document"]


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (strings, bytes, messages)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _text(number: int, value: str) -> bytes:
    return _field(number, value.encode()) if value else b""


def _named(number: int, name: str, value: bytes) -> bytes:
    """A ``Named*`` message (name 1, value 2) as field ``number``."""
    return _field(number, _text(1, name) + _field(2, value))


def _extension(name: str, value: Any) -> bytes:
    """A ``NamedAny`` whose ``Any`` holds the value's YAML (field 2)."""
    text = yaml.safe_dump(value, default_flow_style=False, sort_keys=True)
    return _named(31, name, _text(2, text))


def _schema(schema: dict[str, Any]) -> bytes:
    out = _text(1, schema.get("$ref", "")) + _text(2, schema.get("format", ""))
    out += _text(4, schema.get("description", ""))
    out += b"".join(_text(19, name) for name in schema.get("required", ()))
    if "additionalProperties" in schema:
        out += _field(21, _field(1, _schema(schema["additionalProperties"])))
    if "type" in schema:
        out += _field(22, _text(1, schema["type"]))
    if "items" in schema:
        out += _field(23, _field(1, _schema(schema["items"])))
    if "properties" in schema:
        properties = b"".join(
            _named(1, name, _schema(value)) for name, value in schema["properties"].items()
        )
        out += _field(25, properties)
    for key, value in schema.items():
        if key.startswith("x-"):
            out += _extension(key, value)
    return out


def encode_document(document: dict[str, Any]) -> bytes:
    """The gnostic protobuf of an OpenAPI v2 (swagger) document."""
    info = document.get("info") or {}
    out = _text(1, document.get("swagger", "2.0"))
    out += _field(2, _text(1, info.get("title", "")) + _text(2, info.get("version", "")))
    out += _field(8, b"")
    definitions = b"".join(
        _named(1, name, _schema(schema))
        for name, schema in (document.get("definitions") or {}).items()
    )
    return out + _field(9, definitions)
