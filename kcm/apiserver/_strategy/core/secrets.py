"""Secrets: type Opaque by default; data keys checked as ConfigMaps' are."""

from __future__ import annotations

from ..._field_errors import Cause
from ..._store import Obj
from .._base import Strategy
from .._context import Context
from .configmaps import validate_data_keys

__all__ = ["SecretStrategy"]


class SecretStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/core/secret`` (its defaults and validation)."""

    def validate(self, obj: Obj) -> list[Cause]:
        return super().validate(obj) + validate_data_keys(obj)

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        super().prepare_for_create(obj, ctx)
        if not obj.get("type"):
            obj["type"] = "Opaque"
