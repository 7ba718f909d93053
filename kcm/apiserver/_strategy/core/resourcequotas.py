"""ResourceQuotas: Go always writes their ``status`` (a struct, not a pointer), ``{}`` before
the resourcequota controller fills it."""

from __future__ import annotations

from typing import Any, ClassVar

from .._base import Strategy

__all__ = ["ResourceQuotaStrategy"]


class ResourceQuotaStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/core/resourcequota`` (what it writes)."""

    status_zero: ClassVar[dict[str, Any] | None] = {}
