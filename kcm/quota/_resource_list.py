"""Arithmetic on resource lists (``{"pods": 2, "requests.cpu": 300m}``), as kube's
``pkg/quota/v1`` helpers: a name missing from one side counts as absent, not as zero."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ._quantity import Quantity

__all__ = [
    "ResourceList",
    "add",
    "equals",
    "less_than_or_equal",
    "mask",
    "max_of",
    "pretty_print",
    "remove_zeros",
    "resource_list",
    "subtract_non_negative",
    "to_json",
]

ResourceList = dict[str, Quantity]
"""Resource name (``cpu``, ``requests.memory``, ``count/pods``) to amount, as a quota's ``hard``."""
_ZERO = Quantity.count(0)


def resource_list(raw: Mapping[str, Any] | None) -> ResourceList:
    """A resource list from its JSON form; values that are not quantities are skipped
    (the server has validated what it stored)."""
    out: ResourceList = {}
    for name, text in (raw or {}).items():
        try:
            out[name] = Quantity.parse(text)
        except (ValueError, TypeError):
            continue
    return out


def to_json(items: ResourceList) -> dict[str, str]:
    """The JSON form, names sorted."""
    return {name: str(items[name]) for name in sorted(items)}


def add(a: ResourceList, b: ResourceList) -> ResourceList:
    out = dict(a)
    for name, value in b.items():
        out[name] = out[name] + value if name in out else value
    return out


def max_of(a: ResourceList, b: ResourceList) -> ResourceList:
    out = dict(a)
    for name, value in b.items():
        if name not in out or out[name] <= value:
            out[name] = value
    return out


def subtract_non_negative(a: ResourceList, b: ResourceList) -> ResourceList:
    """``a - b`` per name, never below zero; names only in ``b`` are zero."""
    out: ResourceList = {}
    for name, value in a.items():
        left = value - b[name] if name in b else value
        out[name] = left if left > _ZERO else _ZERO
    for name in b:
        out.setdefault(name, _ZERO)
    return out


def mask(items: ResourceList, names: Iterable[str]) -> ResourceList:
    keep = set(names)
    return {name: value for name, value in items.items() if name in keep}


def remove_zeros(items: ResourceList) -> ResourceList:
    return {name: value for name, value in items.items() if value.value != 0}


def equals(a: ResourceList, b: ResourceList) -> bool:
    return a.keys() == b.keys() and all(a[name] == b[name] for name in a)


def less_than_or_equal(a: ResourceList, b: ResourceList) -> tuple[bool, list[str]]:
    """Whether every name of ``b`` that ``a`` has is within ``b``; the names that are not."""
    exceeded = sorted(name for name, limit in b.items() if name in a and a[name] > limit)
    return not exceeded, exceeded


def pretty_print(items: ResourceList) -> str:
    """``name=value`` pairs sorted by name, comma-separated (quota's 403 texts)."""
    return ",".join(f"{name}={items[name]}" for name in sorted(items))
