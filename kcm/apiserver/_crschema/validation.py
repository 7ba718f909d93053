"""A custom resource against its CRD version's schema, as apiextensions-apiserver validates it.

kube-openapi's ``SchemaValidator`` walks value and schema together and collects errors whose
messages name the path inside the body (``spec.size in body must be of type integer:
"string"``); ``ValidateCustomResource`` then turns each into a Status cause: ``Required value``
for a missing required property, ``Unsupported value`` (with the enum) for an enum miss, and
``Invalid value: <value>: <message>`` for everything else. Per node the checks run in
kube-openapi's order (type, allOf/anyOf/oneOf/not, string, format, number, array, enum,
object), each where it applies to the value's JSON type; properties are visited in name order
(Go visits them in map order, so kube-apiserver's order of several errors varies), and an
error inside a list item names the list's path, without the index, as kube-openapi does.

Only the formats apiextensions-apiserver keeps are checked (``date``, ``date-time``, ``uuid``,
``ipv4`` ...); ``int32``, ``double`` and other unknown formats are ignored, as there.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from functools import lru_cache
from typing import Any, Final

from .._field_errors import Cause, invalid, not_supported, required

__all__ = ["go_number", "validate"]

_IN: Final = "body"


@dataclass(frozen=True, slots=True)
class _Error:
    """One kube-openapi error: where (``name``, dotted), what kind, the value it reports."""

    name: str
    code: str  # "required", "enum", "invalid", "plain" (not a validation error: no path)
    message: str
    value: Any = None
    values: tuple[Any, ...] = ()


def validate(obj: Any, schema: Mapping[str, Any] | None, path: str = "") -> list[Cause]:
    """The Status causes for ``obj`` against ``schema`` (none: valid).

    Args:
        obj: the custom resource (or, for a schema's ``default``, the default value).
        schema: the ``openAPIV3Schema``; None validates nothing.
        path: a field path every cause's field starts with (``spec.validation...default``
            when checking a default); "" for a custom resource.
    """
    if not schema:
        return []
    return [_cause(e, path) for e in _validate(obj, schema, "")]


def _cause(err: _Error, prefix: str) -> Cause:
    field = err.name.lstrip(".") if err.name not in ("", ".") else ""
    field = ".".join(p for p in (prefix, field) if p)
    if err.code == "required":
        return required(field)
    if err.code == "enum":
        values = [v if isinstance(v, str) else _json(v) for v in err.values]
        return not_supported(field, _value(err.value), values)
    if err.code == "plain":
        return invalid(prefix or "<nil>", "", err.message)
    return invalid(field, _value("" if err.value is None else err.value), err.message)


def _value(value: Any) -> Any:
    """A reported value as ``field.Error`` prints it (floats as Go's ``%v``)."""
    if isinstance(value, float) and not isinstance(value, bool):
        return _GoNumber(value)
    return value


class _GoNumber(float):
    """A float that prints as Go's ``%v`` does (in :func:`.._field_errors.go_value`)."""

    def __str__(self) -> str:
        return go_number(float(self))


def go_number(value: float | int) -> str:
    """A number as Go's ``%v`` prints it: ints as they are, float64s with the shortest digits,
    in exponent form below 1e-4 and from 1e+06 on (``1``, ``0.5``, ``1e+06``)."""
    if isinstance(value, int):
        return str(value)
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if str(value).startswith("-") else "0"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits))
    point = exponent + len(text) - 1  # the decimal exponent of the first digit
    minus = "-" if sign else ""
    if point < -4 or point >= 6:
        mantissa = text[0] + (f".{text[1:]}" if len(text) > 1 else "")
        return f"{minus}{mantissa}e{'-' if point < 0 else '+'}{abs(point):02d}"
    return minus + format(Decimal(text).scaleb(exponent), "f")


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# -- the walk --------------------------------------------------------------------------------


def _types(schema: Mapping[str, Any]) -> list[str]:
    if schema.get("x-kubernetes-int-or-string"):
        return ["integer", "string"]
    t = schema.get("type")
    return [t] if isinstance(t, str) and t else []


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return ""


def _join(path: str, key: str | int) -> str:
    return f"{path}.{key}" if path else str(key)


def _validate(data: Any, schema: Mapping[str, Any], path: str) -> list[_Error]:
    errors: list[_Error] = []
    if data is None:
        errors += _check_type(data, schema, path)
        errors += _check_enum(data, schema, path)
        return errors
    kind = _json_type(data)
    errors += _check_type(data, schema, path)
    errors += _check_junctors(data, schema, path)
    if kind == "string":
        errors += _check_string(data, schema, path)
        errors += _check_format(data, schema, path)
    if kind in ("integer", "number"):
        errors += _check_number(data, schema, path)
    if kind == "array":
        errors += _check_array(data, schema, path)
    errors += _check_enum(data, schema, path)
    if kind == "object":
        errors += _check_object(data, schema, path)
    return errors


def _invalid_type(path: str, type_name: str, value: Any) -> _Error:
    where = f"{path} in {_IN}"
    if isinstance(value, str):
        return _Error(
            path, "invalid", f"{where} must be of type {type_name}: {_json(value)}", value
        )
    return _Error(path, "invalid", f"{where} must be of type {type_name}", value)


def _check_type(data: Any, schema: Mapping[str, Any], path: str) -> list[_Error]:
    types = _types(schema)
    fmt = _format(schema)
    if not types and not fmt:
        return []
    if data is None:
        if types and "null" not in types and not schema.get("nullable"):
            return [_invalid_type(path, ",".join(types), "null")]
        return []
    kind = _json_type(data)
    value_format = {"integer": "int64", "number": "float64"}.get(kind, "")
    float_int = kind == "number" and float(data).is_integer() and "integer" in types
    int_float = kind == "integer" and "number" in types
    compatible = kind in types or float_int or int_float
    if kind not in ("string", "array") and fmt and not (compatible or value_format == fmt):
        return [_invalid_type(path, fmt, value_format)]
    if not ("number" in types or "integer" in types) and fmt and kind in ("string", "array"):
        return []
    if not compatible:
        return [_invalid_type(path, ",".join(types), kind)]
    return []


def _check_junctors(data: Any, schema: Mapping[str, Any], path: str) -> list[_Error]:
    """``allOf``, ``anyOf``, ``oneOf`` and ``not`` (kube-openapi's schemaPropsValidator)."""
    errors: list[_Error] = []
    quoted = _json(path)
    any_of = [s for s in schema.get("anyOf") or () if isinstance(s, Mapping)]
    if any_of:
        results = [_validate(data, s, path) for s in any_of]
        if all(results):
            errors.append(_plain(f"{quoted} must validate at least one schema (anyOf)"))
            errors += results[0]
    one_of = [s for s in schema.get("oneOf") or () if isinstance(s, Mapping)]
    if one_of:
        results = [_validate(data, s, path) for s in one_of]
        valid = sum(1 for r in results if not r)
        if valid != 1:
            more = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
            errors.append(_plain(f"{quoted} must validate one and only one schema (oneOf). {more}"))
            if valid == 0:
                errors += results[0]
    all_of = [s for s in schema.get("allOf") or () if isinstance(s, Mapping)]
    if all_of:
        results = [_validate(data, s, path) for s in all_of]
        for result in results:
            errors += result
        valid = sum(1 for r in results if not r)
        if valid != len(all_of):
            more = ". None validated" if valid == 0 else ""
            errors.append(_plain(f"{quoted} must validate all the schemas (allOf){more}"))
    not_schema = schema.get("not")
    if isinstance(not_schema, Mapping) and not _validate(data, not_schema, path):
        errors.append(_plain(f"{quoted} must not validate the schema (not)"))
    return errors


def _plain(message: str) -> _Error:
    return _Error("", "plain", message)


def _check_string(data: str, schema: Mapping[str, Any], path: str) -> list[_Error]:
    where = f"{path} in {_IN}"
    length = len(data)
    max_length = schema.get("maxLength")
    if isinstance(max_length, int) and length > max_length:
        return [_Error(path, "invalid", f"{where} should be at most {max_length} chars long", data)]
    min_length = schema.get("minLength")
    if isinstance(min_length, int) and length < min_length:
        return [
            _Error(path, "invalid", f"{where} should be at least {min_length} chars long", data)
        ]
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and pattern:
        compiled = _regex(pattern)
        if compiled is None:
            return []
        if not compiled.search(data):
            return [_Error(path, "invalid", f"{where} should match '{pattern}'", data)]
    return []


@lru_cache(maxsize=512)
def _regex(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except re.error:
        return None


def _check_number(data: float, schema: Mapping[str, Any], path: str) -> list[_Error]:
    where = f"{path} in {_IN}"
    errors: list[_Error] = []
    is_int = isinstance(data, int)
    factor = schema.get("multipleOf")
    if isinstance(factor, int | float) and not isinstance(factor, bool) and factor:
        if is_int:
            bad = data % int(factor) != 0 if int(factor) else False
            shown: float | int = int(factor)
        else:
            ratio = (1 / factor) * data if factor < 1 else data / factor
            bad = not float(ratio).is_integer()
            shown = float(factor)
        if bad:
            text = f"{where} should be a multiple of {go_number(shown)}"
            errors.append(_Error(path, "invalid", text, data))
    for key, exclusive_key, inclusive, exclusive, beyond in (
        ("minimum", "exclusiveMinimum", "greater than or equal to", "greater than", _below),
        ("maximum", "exclusiveMaximum", "less than or equal to", "less than", _above),
    ):
        limit = schema.get(key)
        if not isinstance(limit, int | float) or isinstance(limit, bool):
            continue
        strict = bool(schema.get(exclusive_key))
        bound: float | int = int(limit) if is_int else float(limit)
        if beyond(data, bound, strict):
            relation = exclusive if strict else inclusive
            text = f"{where} should be {relation} {go_number(bound)}"
            errors.append(_Error(path, "invalid", text, data))
    return errors


def _below(value: float, bound: float, strict: bool) -> bool:
    return value <= bound if strict else value < bound


def _above(value: float, bound: float, strict: bool) -> bool:
    return value >= bound if strict else value > bound


def _check_array(data: list[Any], schema: Mapping[str, Any], path: str) -> list[_Error]:
    where = f"{path} in {_IN}"
    errors: list[_Error] = []
    items = schema.get("items")
    if isinstance(items, Mapping):
        for item in data:  # kube-openapi's item validator keeps the list's path (no index)
            errors += _validate(item, items, path)
    size = len(data)
    min_items = schema.get("minItems")
    if isinstance(min_items, int) and size < min_items:
        errors.append(
            _Error(path, "invalid", f"{where} should have at least {min_items} items", size)
        )
    max_items = schema.get("maxItems")
    if isinstance(max_items, int) and size > max_items:
        errors.append(
            _Error(path, "invalid", f"{where} should have at most {max_items} items", size)
        )
    if schema.get("uniqueItems"):
        seen: list[Any] = []
        for item in data:
            if any(_same(item, other) for other in seen):
                errors.append(_Error(path, "invalid", f"{where} shouldn't contain duplicates"))
                break
            seen.append(item)
    return errors


def _same(a: Any, b: Any) -> bool:
    return _json_type(a) == _json_type(b) and a == b


def _check_enum(data: Any, schema: Mapping[str, Any], path: str) -> list[_Error]:
    enum = schema.get("enum")
    if not isinstance(enum, list) or not enum:
        return []
    for allowed in enum:
        if _enum_match(data, allowed):
            return []
    where = f"{path} in {_IN}"
    return [_Error(path, "enum", f"{where} should be one of {enum}", data, tuple(enum))]


def _enum_match(data: Any, allowed: Any) -> bool:
    """Go's ``reflect`` equality after converting to the enum value's type: numbers compare
    across int and float, nothing else converts."""
    if isinstance(data, bool) or isinstance(allowed, bool):
        return type(data) is type(allowed) and data == allowed
    if isinstance(data, int | float) and isinstance(allowed, int | float):
        return bool(data == allowed)
    return _json_type(data) == _json_type(allowed) and data == allowed


def _check_object(data: dict[str, Any], schema: Mapping[str, Any], path: str) -> list[_Error]:
    where = f"{path} in {_IN}"
    size = len(data)
    min_props = schema.get("minProperties")
    if isinstance(min_props, int) and size < min_props:
        text = f"{where} should have at least {min_props} properties"
        return [_Error(path, "invalid", text, min_props)]
    max_props = schema.get("maxProperties")
    if isinstance(max_props, int) and size > max_props:
        text = f"{where} should have at most {max_props} properties"
        return [_Error(path, "invalid", text, max_props)]
    errors: list[_Error] = []
    properties = schema.get("properties")
    props: Mapping[str, Any] = properties if isinstance(properties, Mapping) else {}
    additional = schema.get("additionalProperties")
    if additional is False:
        for key in sorted(data):
            if key not in props:
                text = f"{path}.{key} in {_IN} is a forbidden property"
                errors.append(_Error(path, "invalid", text, key))
    elif isinstance(additional, Mapping):
        for key in sorted(data):
            if key not in props:
                errors += _validate(data[key], additional, f"{path}.{key}")
    for name in sorted(props):
        if name in data and isinstance(props[name], Mapping):
            errors += _validate(data[name], props[name], _join(path, name))
    for name in schema.get("required") or ():
        if name not in data:
            errors.append(
                _Error(f"{path}.{name}", "required", f"{path}.{name} in {_IN} is required")
            )
    return errors


# -- formats ---------------------------------------------------------------------------------

_UUID: Final = {
    "uuid": r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
    "uuid3": r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
    "uuid4": r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
    "uuid5": r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
}
_HOSTNAME: Final = re.compile(
    r"^([a-zA-Z0-9]((-?[a-zA-Z0-9]{0,62})?)|"
    r"([a-zA-Z0-9](([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\.)){1,}([a-zA-Z]){2,63})$"
)
_MAC: Final = re.compile(
    r"^([0-9a-fA-F]{2}[:-]){5,19}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{4}\.){2,9}[0-9a-fA-F]{4}$"
)
_HEX_COLOR: Final = re.compile(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")
_RGB_COLOR: Final = re.compile(
    r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])"
    r"\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$"
)
_DURATION: Final = re.compile(
    r"^((\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$|^[-+]?\d+\s*"
    r"(ns|us|ms|s|m|h|d|w|nanos?|micros?|millis?|seconds?|minutes?|hours?|days?|weeks?)$"
)
_SUPPORTED: Final = frozenset(
    {
        "bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid",
        "uuid3", "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor",
        "rgbcolor", "byte", "password", "date", "duration", "datetime",
    }
)  # fmt: skip


def _format(schema: Mapping[str, Any]) -> str:
    """The schema's format if apiextensions-apiserver keeps it (normalised, no dashes)."""
    fmt = schema.get("format")
    if not isinstance(fmt, str) or not fmt:
        return ""
    normalized = fmt.replace("-", "")
    return normalized if normalized in _SUPPORTED else ""


def _check_format(data: str, schema: Mapping[str, Any], path: str) -> list[_Error]:
    fmt = _format(schema)
    check = _FORMATS.get(fmt)
    if check is None or check(data):
        return []
    return [_invalid_type(path, fmt, data)]


def _is_date(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return len(text) == 10


_DATETIME: Final = re.compile(
    r"^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d(:\d\d(\.\d+)?)?([Zz]|[+-]\d\d:?\d\d)?$"
)


def _is_datetime(text: str) -> bool:
    if not _DATETIME.match(text):
        return False
    try:
        datetime.fromisoformat(text.replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _is_ip(version: int) -> Callable[[str], bool]:
    def check(text: str) -> bool:
        try:
            return ipaddress.ip_address(text).version == version or (version == 6 and ":" in text)
        except ValueError:
            return False

    return check


def _is_cidr(text: str) -> bool:
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        return False
    return "/" in text


def _is_byte(text: str) -> bool:
    try:
        base64.b64decode(text, validate=True)
    except ValueError:
        return False
    return True


def _matches(pattern: str | re.Pattern[str]) -> Callable[[str], bool]:
    compiled = re.compile(pattern) if isinstance(pattern, str) else pattern
    return lambda text: bool(compiled.match(text))


_FORMATS: Final[dict[str, Callable[[str], bool]]] = {
    "date": _is_date,
    "datetime": _is_datetime,
    "ipv4": _is_ip(4),
    "ipv6": _is_ip(6),
    "cidr": _is_cidr,
    "mac": _matches(_MAC),
    "hostname": lambda t: len(t) <= 255 and bool(_HOSTNAME.match(t)),
    "hexcolor": _matches(_HEX_COLOR),
    "rgbcolor": _matches(_RGB_COLOR),
    "byte": _is_byte,
    "duration": _matches(_DURATION),
    **{name: _matches(pattern) for name, pattern in _UUID.items()},
}
