"""Pruning: what decoding a custom resource drops, before anything else sees it.

``prune`` removes every field the schema does not specify, except under
``x-kubernetes-preserve-unknown-fields`` (which keeps unknown fields but still prunes inside
the properties it does specify) and the ``apiVersion``/``kind``/``metadata`` of an
``x-kubernetes-embedded-resource``. At the root it also drops ``apiVersion``, ``kind`` and
``metadata``, which the caller restores (kube-apiserver's ``unstructuredSchemaCoercer``).
``prune_nulls`` then drops nulls the schema neither allows (``nullable``) nor defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["prune", "prune_nulls", "subschema"]

_META_FIELDS: Final = frozenset({"apiVersion", "kind", "metadata"})


def subschema(schema: Mapping[str, Any] | None, key: str) -> Mapping[str, Any] | None:
    """The schema of property ``key`` of an object with ``schema`` (``additionalProperties``
    for keys it does not list), or None."""
    if schema is None:
        return None
    props = schema.get("properties")
    if isinstance(props, Mapping) and isinstance(props.get(key), Mapping):
        child: Mapping[str, Any] = props[key]
        return child
    additional = schema.get("additionalProperties")
    return additional if isinstance(additional, Mapping) else None


def _items(schema: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    items = schema.get("items") if schema is not None else None
    return items if isinstance(items, Mapping) else None


def prune(value: Any, schema: Mapping[str, Any] | None) -> None:
    """Remove, in place, the fields of ``value`` that ``schema`` does not specify."""
    if schema is not None and schema.get("x-kubernetes-preserve-unknown-fields"):
        _skip_prune(value, schema)
        return
    if isinstance(value, dict):
        embedded = bool(schema and schema.get("x-kubernetes-embedded-resource"))
        for key in list(value):
            if embedded and key in _META_FIELDS:
                continue
            child = subschema(schema, key)
            if child is None:
                del value[key]
            else:
                prune(value[key], child)
    elif isinstance(value, list):
        for item in value:
            prune(item, _items(schema))


def _skip_prune(value: Any, schema: Mapping[str, Any]) -> None:
    """Under ``x-kubernetes-preserve-unknown-fields``: keep unknown fields, prune the known."""
    if isinstance(value, dict):
        embedded = bool(schema.get("x-kubernetes-embedded-resource"))
        for key, item in value.items():
            if embedded and key in _META_FIELDS:
                continue
            child = subschema(schema, key)
            if child is not None:
                prune(item, child)
    elif isinstance(value, list):
        for item in value:
            prune(item, _items(schema))


def prune_nulls(value: Any, schema: Mapping[str, Any] | None) -> None:
    """Remove, in place, nulls whose schema is not ``nullable`` and has no ``default`` (those
    are defaulted later)."""
    if isinstance(value, dict):
        for key in list(value):
            child = subschema(schema, key)
            item = value[key]
            if item is None and child is not None and not _nullable_or_defaulted(child):
                del value[key]
            else:
                prune_nulls(item, child)
    elif isinstance(value, list):
        for item in value:
            prune_nulls(item, _items(schema))


def _nullable_or_defaulted(schema: Mapping[str, Any]) -> bool:
    return bool(schema.get("nullable")) or schema.get("default") is not None
