"""Secrets: type Opaque by default, ``stringData`` written into ``data``, the keys each type
needs, a type that never changes, and ConfigMaps' key and immutability rules."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from ..._field_errors import Cause, invalid, invalid_shown, required
from ..._store import Obj
from .._base import Strategy
from .configmaps import MAX_DATA_SIZE, decoded_size, immutable_data, key_errors

__all__ = ["SecretStrategy"]


class SecretStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/core/secret`` (its defaults and validation)."""

    def default(self, obj: Obj) -> None:
        """``SetDefaults_Secret`` and the v1 conversion of ``stringData``."""
        if not obj.get("type"):
            obj["type"] = "Opaque"
        strings = obj.pop("stringData", None)
        if isinstance(strings, Mapping) and strings:
            data = dict(obj.get("data") or {})
            for key, value in strings.items():
                data[key] = base64.b64encode(str(value).encode()).decode()
            obj["data"] = data

    def validate(self, obj: Obj) -> list[Cause]:
        data: Mapping[str, Any] = obj.get("data") or {}
        causes = key_errors("data", data)
        if decoded_size(data) > MAX_DATA_SIZE:
            causes.append(
                {
                    "reason": "FieldValueTooLong",
                    "message": f"Too long: must have at most {MAX_DATA_SIZE} bytes",
                    "field": "data",
                }
            )
        return super().validate(obj) + causes + _type_errors(obj, data)

    def validate_update(self, new: Obj, old: Obj) -> list[Cause]:
        causes = self.validate_metadata_update(new, old)
        if new.get("type") != old.get("type"):
            causes.append(invalid("type", new.get("type") or "", "field is immutable"))
        return causes + immutable_data(new, old, ("data",)) + self.validate(new)


def _decoded(value: Any) -> bytes:
    try:
        return base64.b64decode(str(value))
    except ValueError:
        return b""


def _type_errors(obj: Obj, data: Mapping[str, Any]) -> list[Cause]:
    """The keys a Secret of each built-in type must have."""
    kind = obj.get("type")
    if kind == "kubernetes.io/service-account-token":
        annotations = obj["metadata"].get("annotations") or {}
        if not annotations.get("kubernetes.io/service-account.name"):
            return [required("metadata.annotations[kubernetes.io/service-account.name]")]
    elif kind in ("kubernetes.io/dockercfg", "kubernetes.io/dockerconfigjson"):
        key = ".dockercfg" if kind == "kubernetes.io/dockercfg" else ".dockerconfigjson"
        if key not in data:
            return [required(f"data[{key}]")]
        try:
            parsed = json.loads(_decoded(data[key]) or b"null")
        except ValueError as exc:
            return [invalid_shown(f"data[{key}]", '"<secret contents redacted>"', str(exc))]
        if not isinstance(parsed, dict):
            why = "json: cannot unmarshal into Go value of type map[string]interface {}"
            return [invalid_shown(f"data[{key}]", '"<secret contents redacted>"', why)]
    elif kind == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:
            return [required("data[username]"), required("data[password]")]
    elif kind == "kubernetes.io/ssh-auth":
        if not _decoded(data.get("ssh-privatekey", "")):
            return [required("data[ssh-privatekey]")]
    elif kind == "kubernetes.io/tls":
        return [required(f"data[{key}]") for key in ("tls.crt", "tls.key") if key not in data]
    return []
