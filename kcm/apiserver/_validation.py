"""Object validation as kube-apiserver does it, by (group, kind), without a request.

The server validates through each kind's strategy (:mod:`._strategy`); these entry points run
the same checks for a kind named by group and kind (tests, benchmarks). The pieces live in
:mod:`._field_errors` (causes and the 422 Status), :mod:`._names` (name formats) and
:mod:`._object_meta` (``ValidateObjectMeta``). Sources: ``k8s.io/apimachinery/pkg/api/validation``,
``pkg/apis/core/validation``, ``pkg/apis/apps/validation`` and ``util/validation/field``.
"""

from __future__ import annotations

from typing import Any

from . import _object_meta
from ._field_errors import Cause
from ._names import check_name
from ._registry import Resource
from ._store import Obj, deep_copy
from ._strategy import Strategy, strategy_for

__all__ = [
    "name_errors",
    "validate_create",
    "validate_object",
    "validate_object_meta",
    "validate_update",
]


def _strategy(group: str, kind: str, namespaced: bool) -> Strategy:
    return strategy_for(
        Resource(group=group, version="", kind=kind, plural="", namespaced=namespaced)
    )


def name_errors(name: str, group: str, kind: str, *, prefix: bool = False) -> list[str]:
    """Why ``name`` is not a valid ``metadata.name`` for the kind (empty list: valid).

    Args:
        prefix: validate a ``generateName`` prefix: a trailing ``-`` is allowed.
    """
    return check_name(_strategy(group, kind, True).name_rule, name, prefix=prefix)


def validate_object_meta(obj: Obj, *, group: str, kind: str, namespaced: bool) -> list[Cause]:
    """``ValidateObjectMeta`` with the kind's name rule (after generateName was resolved)."""
    rule = _strategy(group, kind, namespaced).name_rule
    return _object_meta.validate_object_meta(obj, name_rule=rule, namespaced=namespaced)


def validate_object(obj: Obj, *, group: str, kind: str, namespaced: bool) -> list[Cause]:
    """ObjectMeta validation plus the kind's own checks (its strategy's ``validate``), of the
    object with the kind's defaults, as the server validates a write.

    Returns:
        Status causes; pass them with the object's name to
        :func:`._field_errors.invalid_status`.
    """
    strategy = _strategy(group, kind, namespaced)
    defaulted = deep_copy(obj)
    strategy.default(defaulted)
    return strategy.validate(defaulted)


def validate_create(obj: Obj, resource: Any) -> list[Cause]:
    """:func:`validate_object` for a resource with ``group``, ``kind`` and ``namespaced``."""
    return validate_object(
        obj,
        group=str(getattr(resource, "group", "")),
        kind=str(getattr(resource, "kind", "")),
        namespaced=bool(getattr(resource, "namespaced", True)),
    )


def validate_update(old: Obj, new: Obj, resource: Any) -> list[Cause]:
    """:func:`validate_create` of ``new`` plus the kind's immutable-field rules."""
    strategy = _strategy(
        str(getattr(resource, "group", "")),
        str(getattr(resource, "kind", "")),
        bool(getattr(resource, "namespaced", True)),
    )
    defaulted = deep_copy(new)
    strategy.default(defaulted)
    return strategy.validate_update(defaulted, old)
