"""Defaulting: a schema's ``default`` values filled into a custom resource.

Applied when a request body is decoded (create, update, patch) and when a stored object is
read, so a default added to the schema later shows on objects stored before it. A property
gets its default when it is missing, or null without ``nullable``; defaults are applied
top-down, so a defaulted object then gets its own properties' defaults.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from .pruning import subschema

__all__ = ["default", "has_defaults"]


def default(value: Any, schema: Mapping[str, Any] | None) -> None:
    """Fill in, in place, the defaults ``schema`` specifies for ``value``."""
    if schema is None:
        return
    if isinstance(value, dict):
        props = schema.get("properties")
        if isinstance(props, Mapping):
            for key, prop in props.items():
                if not isinstance(prop, Mapping) or prop.get("default") is None:
                    continue
                if key not in value or _non_nullable_null(value[key], prop):
                    value[key] = copy.deepcopy(prop["default"])
        for key in value:
            child = subschema(schema, key)
            if child is None:
                continue
            if _non_nullable_null(value[key], child) and child.get("default") is not None:
                value[key] = copy.deepcopy(child["default"])
            default(value[key], child)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for i, item in enumerate(value):
                if _non_nullable_null(item, items) and items.get("default") is not None:
                    value[i] = copy.deepcopy(items["default"])
                default(value[i], items)


def _non_nullable_null(value: Any, schema: Mapping[str, Any]) -> bool:
    return value is None and not schema.get("nullable")


def has_defaults(schema: Any) -> bool:
    """Whether ``schema`` specifies a ``default`` anywhere (so reads need defaulting)."""
    if isinstance(schema, Mapping):
        if schema.get("default") is not None:
            return True
        return any(has_defaults(v) for k, v in schema.items() if k not in ("default", "enum"))
    if isinstance(schema, list):
        return any(has_defaults(v) for v in schema)
    return False
