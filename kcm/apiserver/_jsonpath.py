"""The JSON paths of CRD printer columns, as client-go's ``jsonpath`` evaluates them for the
server's Tables: ``.spec.replicas``, ``.items[0].name``, ``.items[*].name`` and filters such as
``.status.conditions[?(@.type=="Ready")].status`` (``==``, ``!=``, ``<``, ``>``, ``<=``, ``>=``
against a string or number, or just ``@.field`` for presence)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["find"]

_TOKEN: Final = re.compile(r"\.([^.\[\]]+)|\[([^\]]*)\]")
_FILTER: Final = re.compile(r"^\?\(@\.([\w.\-]+)\s*(?:(==|!=|<=|>=|<|>)\s*(.+?))?\s*\)$")


def find(obj: Any, path: str) -> list[Any]:
    """Every value ``path`` selects in ``obj`` (empty: none; a missing key is no error)."""
    path = path.strip()
    if path.startswith("{") and path.endswith("}"):
        path = path[1:-1]
    if path.startswith("$"):
        path = path[1:]
    if path and not path.startswith((".", "[")):
        path = "." + path
    current = [obj]
    pos = 0
    for match in _TOKEN.finditer(path):
        if match.start() != pos:
            return []
        pos = match.end()
        key, index = match.group(1), match.group(2)
        current = _step(current, key, index)
    return current if pos == len(path) else []


def _step(values: list[Any], key: str | None, index: str | None) -> list[Any]:
    out: list[Any] = []
    for value in values:
        if key is not None:
            if isinstance(value, Mapping) and key in value:
                out.append(value[key])
        elif index is not None:
            out.extend(_index(value, index.strip()))
    return out


def _index(value: Any, index: str) -> list[Any]:
    if index == "*":
        if isinstance(value, list):
            return list(value)
        return list(value.values()) if isinstance(value, Mapping) else []
    if index.startswith("?"):
        return [item for item in value if _matches(item, index)] if isinstance(value, list) else []
    if isinstance(value, Mapping):
        key = index.strip("'\"")
        return [value[key]] if key in value else []
    if isinstance(value, list):
        try:
            i = int(index)
        except ValueError:
            return []
        if -len(value) <= i < len(value):
            return [value[i]]
    return []


def _matches(item: Any, expression: str) -> bool:
    match = _FILTER.match(expression)
    if match is None:
        return False
    field, op, literal = match.groups()
    found = find(item, "." + field)
    if op is None:
        return bool(found)
    if not found:
        return False
    want = _literal(literal)
    got = found[0]
    try:
        result = {
            "==": lambda: got == want,
            "!=": lambda: got != want,
            "<": lambda: got < want,
            ">": lambda: got > want,
            "<=": lambda: got <= want,
            ">=": lambda: got >= want,
        }[op]()
    except TypeError:
        return False
    return bool(result)


def _literal(text: str) -> Any:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    try:
        return json.loads(text)
    except ValueError:
        return text
