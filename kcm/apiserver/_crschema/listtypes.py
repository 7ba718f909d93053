"""``x-kubernetes-list-type``: a ``set`` has no duplicate items, a ``map`` no two items with the
same ``x-kubernetes-list-map-keys`` values (``ValidateListSetsAndMaps``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .._field_errors import Cause, duplicate, invalid

__all__ = ["validate_list_types"]


def validate_list_types(obj: Any, schema: Mapping[str, Any] | None, path: str = "") -> list[Cause]:
    """The Duplicate causes of ``obj``'s set and map lists (an object against its schema)."""
    if schema is None or not isinstance(obj, Mapping):
        return []
    causes: list[Cause] = []
    additional = schema.get("additionalProperties")
    if isinstance(additional, Mapping):
        for key in sorted(obj):
            causes += _value(obj[key], additional, f"{path}[{key}]")
    props = schema.get("properties")
    if isinstance(props, Mapping):
        for key in sorted(obj):
            if isinstance(props.get(key), Mapping):
                causes += _value(obj[key], props[key], f"{path}.{key}" if path else key)
    return causes


def _value(value: Any, schema: Mapping[str, Any], path: str) -> list[Cause]:
    if isinstance(value, list):
        return _array(value, schema, path)
    if isinstance(value, Mapping):
        return validate_list_types(value, schema, path)
    return []


def _array(items: list[Any], schema: Mapping[str, Any], path: str) -> list[Cause]:
    causes: list[Cause] = []
    list_type = schema.get("x-kubernetes-list-type")
    if list_type == "set":
        causes += [duplicate(f"{path}[{i}]", items[i]) for i in _repeated(items)]
    elif list_type == "map":
        causes += _map_list(items, list(schema.get("x-kubernetes-list-map-keys") or ()), path)
    item_schema = schema.get("items")
    if isinstance(item_schema, Mapping):
        for i, item in enumerate(items):
            causes += _value(item, item_schema, f"{path}[{i}]")
    return causes


def _map_list(items: list[Any], keys: list[str], path: str) -> list[Cause]:
    for i, item in enumerate(items):
        if item is not None and not isinstance(item, Mapping):
            return [
                invalid(f"{path}[{i}]", item, "must be an object for an array of list-type map")
            ]
    values = [
        {k: item[k] for k in keys if k in item} if isinstance(item, Mapping) else {}
        for item in items
    ]
    return [duplicate(f"{path}[{i}]", values[i]) for i in _repeated(values)]


def _repeated(items: list[Any]) -> list[int]:
    """The index of each item's second appearance (``validateListSet``)."""
    seen: dict[str, int] = {}
    repeated: list[int] = []
    for i, item in enumerate(items):
        key = json.dumps(item, sort_keys=True)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 2:
            repeated.append(i)
    return repeated
