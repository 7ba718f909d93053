"""YAML request bodies as kube-apiserver reads them (``sigs.k8s.io/yaml`` over ``yaml.v2``).

The body's first document is read with YAML 1.1's plain scalars as ``yaml.v2`` resolves
them: ``y``/``n``/``yes``/``no``/``on``/``off`` are booleans (so a key ``n:`` is the JSON
key ``"false"``), ``0x1F`` and ``0755`` are integers, timestamps stay strings. A body that does
not parse is refused with ``yaml.v2``'s message (``yaml: line 1: did not find expected ','
or ']'``): libyaml's problem text, which PyYAML's C parser reports too.
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime
from typing import Any, Final

import yaml

from ._go_json import JsonFloat

__all__ = ["YamlError", "parse_yaml"]

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_PLAIN: Final = "tag:kcm:go-plain"
_TRUE: Final = frozenset({"y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE"})
_FALSE: Final = frozenset(
    {"n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE"}
)
_NULL: Final = frozenset({"", "~", "null", "Null", "NULL"})
_INF: Final = frozenset({".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"})
_NEG_INF: Final = frozenset({"-.inf", "-.Inf", "-.INF"})
_NAN: Final = frozenset({".nan", ".NaN", ".NAN"})
_YAML_FLOAT: Final = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_GO_INT: Final = re.compile(
    r"^[-+]?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$"
)


class YamlError(ValueError):
    """The body is not YAML; the message is ``yaml.v2``'s."""


def _go_int(plain: str) -> int | None:
    """``strconv.ParseInt(plain, 0, 64)`` (then ``ParseUint``), underscores removed."""
    if not _GO_INT.match(plain):
        return None
    sign = -1 if plain.startswith("-") else 1
    digits = plain.lstrip("+-")
    prefix = digits[:2].lower()
    if prefix in ("0x", "0o", "0b"):
        value = int(digits[2:], {"0x": 16, "0o": 8, "0b": 2}[prefix])
    elif len(digits) > 1 and digits.startswith("0"):
        value = int(digits, 8)
    else:
        value = int(digits)
    value *= sign
    return value if -(2**63) <= value < 2**64 else None


def _resolve_plain(text: str) -> Any:
    """A plain scalar as ``yaml.v2``'s ``resolve`` types it (into ``interface{}``)."""
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if text in _NULL:
        return None
    if text in _INF or text in _NEG_INF or text in _NAN:
        return float("nan") if text in _NAN else float("-inf" if text in _NEG_INF else "inf")
    if text[:1] in "+-.0123456789":
        plain = text.replace("_", "")
        number = _go_int(plain)
        if number is not None:
            return number
        if _YAML_FLOAT.match(plain):
            return JsonFloat(_go_float_literal(float(plain)))
    return text


def _go_float_literal(value: float) -> str:
    """How Go's ``encoding/json`` writes a float64 (``1.0`` -> ``1``, ``1e21`` -> ``1e+21``)."""
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if 1e-6 <= abs(value) < 1e21:
        return repr(value)
    text = f"{value:e}".replace("e-0", "e-").replace("e+0", "e+")
    mantissa, exponent = text.split("e")
    mantissa = repr(float(mantissa))
    return f"{mantissa.removesuffix('.0')}e{exponent}"


class _GoLoader(_Loader):  # type: ignore[misc]
    """PyYAML's safe loader with ``yaml.v2``'s plain scalars (the merge key ``<<`` kept)."""


_GoLoader.yaml_implicit_resolvers = {
    "<": [("tag:yaml.org,2002:merge", re.compile(r"^(?:<<)$"))],
    None: [(_PLAIN, re.compile(r".*", re.DOTALL))],
}
_GoLoader.add_constructor(_PLAIN, lambda loader, node: _resolve_plain(node.value))


def _to_json(value: Any) -> Any:
    """``sigs.k8s.io/yaml``'s conversion: map keys become strings, timestamps strings."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if isinstance(key, bool):
                name = "true" if key else "false"
            elif isinstance(key, int | str):
                name = str(key)
            elif isinstance(key, float):
                name = _go_float_literal(key)
            else:
                raise YamlError(f"error converting YAML to JSON: unsupported map key {key!r}")
            out[name] = _to_json(item)
        return out
    if isinstance(value, list):
        return [_to_json(item) for item in value]
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("latin-1")
    if isinstance(value, float) and (math.isinf(value) or math.isnan(value)):
        shown = "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
        raise YamlError(f"error converting YAML to JSON: json: unsupported value: {shown}")
    return value


def _line(exc: yaml.MarkedYAMLError) -> int:
    """The line ``yaml.v2`` names: the problem's (scanner errors count from one), else the
    context's."""
    problem = exc.problem_mark.line if exc.problem_mark is not None else 0
    if problem:
        return problem + 1 if isinstance(exc, yaml.scanner.ScannerError) else problem
    return exc.context_mark.line if exc.context_mark is not None else 0


def parse_yaml(data: bytes) -> Any:
    """The JSON value of the YAML body's first document (None for an empty body).

    Raises:
        YamlError: the body is not YAML (``yaml.v2``'s message).
    """
    loader = _GoLoader(data)
    try:
        document = loader.get_data() if loader.check_data() else None
    except yaml.MarkedYAMLError as exc:
        line = _line(exc)
        where = f"line {line}: " if line else ""
        raise YamlError(f"yaml: {where}{exc.problem}") from None
    except yaml.YAMLError as exc:
        raise YamlError(f"yaml: {exc}") from None
    finally:
        loader.dispose()
    return _to_json(document)
