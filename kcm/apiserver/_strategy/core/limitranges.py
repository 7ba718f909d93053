"""LimitRanges: the scheme defaults of their items (kube's ``SetDefaults_LimitRangeItem``),
which the LimitRanger admission plugin then applies to pods."""

from __future__ import annotations

from typing import Any

from ..._store import Obj
from .._base import Strategy

__all__ = ["LimitRangeStrategy", "default_limit_range_item"]


class LimitRangeStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/core/limitrange`` (its defaults)."""

    def default(self, obj: Obj) -> None:
        for item in (obj.get("spec") or {}).get("limits") or ():
            if isinstance(item, dict):
                default_limit_range_item(item)


def default_limit_range_item(item: dict[str, Any]) -> None:
    """kube's ``SetDefaults_LimitRangeItem``: for a Container item, ``default`` from ``max``,
    then ``defaultRequest`` from ``default``, then from ``min``."""
    if item.get("type") != "Container":
        return
    default = dict(item.get("default") or {})
    request = dict(item.get("defaultRequest") or {})
    for key, value in (item.get("max") or {}).items():
        default.setdefault(key, value)
    for key, value in default.items():
        request.setdefault(key, value)
    for key, value in (item.get("min") or {}).items():
        request.setdefault(key, value)
    if default:
        item["default"] = default
    if request:
        item["defaultRequest"] = request
