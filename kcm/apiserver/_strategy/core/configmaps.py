"""ConfigMaps: data keys must be config keys (``IsConfigMapKey``); Secrets share the check."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._field_errors import Cause, invalid
from ..._names import config_key_errors
from ..._store import Obj
from .._base import Strategy

__all__ = ["ConfigMapStrategy", "validate_data_keys"]


class ConfigMapStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/core/configmap`` (its validation)."""

    def validate(self, obj: Obj) -> list[Cause]:
        return super().validate(obj) + validate_data_keys(obj)


def validate_data_keys(obj: Mapping[str, Any]) -> list[Cause]:
    """Field errors of ``data``, ``binaryData`` and ``stringData`` keys."""
    causes: list[Cause] = []
    data = obj.get("data")
    in_data: Mapping[str, Any] = data if isinstance(data, Mapping) else {}
    for field in ("data", "binaryData", "stringData"):
        values = obj.get(field)
        if not isinstance(values, Mapping):
            continue
        for key in sorted(values):
            causes.extend(invalid(f"{field}[{key}]", key, msg) for msg in config_key_errors(key))
            if field == "binaryData" and key in in_data:
                causes.append(invalid(f"{field}[{key}]", key, "duplicate of key present in data"))
    return causes
