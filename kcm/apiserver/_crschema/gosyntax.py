"""Go's ``%#v`` of decoded JSON values, as field errors print a bad value that is a map or
a list (``map[string]interface {}{"x":1}``)."""

from __future__ import annotations

import json
from typing import Any

from .validation import go_number

__all__ = ["GoSyntax", "go_syntax"]


def go_syntax(value: Any) -> str:
    """``fmt.Sprintf("%#v", v)`` for ``v`` decoded from JSON into ``interface{}``."""
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return go_number(float(value))
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        items = ", ".join(f"{json.dumps(k)}:{go_syntax(value[k])}" for k in sorted(value))
        return "map[string]interface {}{" + items + "}"
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(go_syntax(v) for v in value) + "}"
    return str(value)


class GoSyntax(int):
    """A bad value that a field error prints as the given Go syntax (``go_value`` prints an
    int subclass with ``str``)."""

    text: str

    def __new__(cls, text: str) -> GoSyntax:
        obj = super().__new__(cls, 0)
        obj.text = text
        return obj

    def __str__(self) -> str:
        return self.text
