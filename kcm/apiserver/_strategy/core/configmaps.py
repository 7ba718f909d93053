"""ConfigMaps: config keys (``IsConfigMapKey``), a key in ``data`` or ``binaryData`` but not
both, 1 MiB in all, and nothing of the data changes once ``immutable`` is set; Secrets share
the key and immutability rules."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any, Final

from ..._field_errors import Cause, forbidden, invalid
from ..._names import config_key_errors
from ..._store import Obj
from .._base import Strategy

__all__ = ["MAX_DATA_SIZE", "ConfigMapStrategy", "decoded_size", "immutable_data", "key_errors"]

MAX_DATA_SIZE: Final = 1024 * 1024
_IMMUTABLE: Final = "field is immutable when `immutable` is set"


class ConfigMapStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/core/configmap`` (its validation)."""

    def validate(self, obj: Obj) -> list[Cause]:
        data = _mapping(obj.get("data"))
        binary = _mapping(obj.get("binaryData"))
        causes: list[Cause] = []
        for key in sorted(data):
            causes += key_errors("data", {key: data[key]})
            if key in binary:
                causes.append(
                    invalid(f"data[{key}]", key, "duplicate of key present in binaryData")
                )
        causes += key_errors("binaryData", binary)
        size = sum(len(str(v).encode()) for v in data.values()) + decoded_size(binary)
        if size > MAX_DATA_SIZE:
            causes.append(
                {
                    "reason": "FieldValueTooLong",
                    "message": f"Too long: must have at most {MAX_DATA_SIZE} bytes",
                    "field": "",
                }
            )
        return super().validate(obj) + causes

    def validate_update(self, new: Obj, old: Obj) -> list[Cause]:
        return (
            self.validate_metadata_update(new, old)
            + immutable_data(new, old, ("data", "binaryData"))
            + self.validate(new)
        )


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def key_errors(field: str, values: Mapping[str, Any]) -> list[Cause]:
    """``IsConfigMapKey`` for every key of ``field``."""
    return [
        invalid(f"{field}[{key}]", key, msg)
        for key in sorted(values)
        for msg in config_key_errors(key)
    ]


def decoded_size(values: Mapping[str, Any]) -> int:
    """The bytes of base64 values (``[]byte`` fields)."""
    total = 0
    for value in values.values():
        try:
            total += len(base64.b64decode(str(value)))
        except (binascii.Error, ValueError):
            total += len(str(value))
    return total


def immutable_data(new: Obj, old: Obj, fields: tuple[str, ...]) -> list[Cause]:
    """Once ``immutable: true``, it stays and the data fields do not change."""
    if old.get("immutable") is not True:
        return []
    causes = [] if new.get("immutable") is True else [forbidden("immutable", _IMMUTABLE)]
    causes += [forbidden(f, _IMMUTABLE) for f in fields if new.get(f) != old.get(f)]
    return causes
