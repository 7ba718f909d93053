"""The hash of a pod template (``controller.ComputeHash``): Deployment's ``pod-template-hash``
and DaemonSet's ``controller-revision-hash``.

Go hashes a deep-print of the Go struct with FNV-32a, which Python cannot reproduce; kcm hashes
the template's canonical JSON (sorted keys, nil and empty values dropped, so a template read
back from the server hashes as the one written) the same way, then the collision count as four
little-endian bytes, and writes the sum as Kubernetes' ``SafeEncodeString`` does. The scheme is
Go's: stable for a template, different when the collision count changes; the values are not.
Never hard-code them.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping, Sequence
from typing import Any

from kcm.models import to_dict
from kcm.models.core_v1 import PodTemplateSpec

from ._safe_encoding import safe_encode_string

__all__ = ["compute_template_hash", "prune_empty"]

_FNV32A_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193


def prune_empty(value: Any) -> Any:
    """``value`` without None, empty maps and empty lists, recursively, as plain dicts and
    lists (Kubernetes' semantic equality treats nil and empty alike). Takes any mapping and
    sequence, so the read-only JSON of a decoded object compares too."""
    kind = type(value)
    if kind is dict or (kind is not list and isinstance(value, Mapping)):
        out = {}
        for key, item in value.items():
            item = prune_empty(item)
            if item is None or (not item and type(item) in _CONTAINERS):
                continue
            out[key] = item
        return out
    if kind is list or (kind is not str and kind is not bytes and isinstance(value, Sequence)):
        return [prune_empty(item) for item in value]
    return value


_CONTAINERS = (dict, list)
"""What an emptied value may be (prune_empty returns plain dicts and lists)."""


def compute_template_hash(template: PodTemplateSpec | None, collision_count: int | None) -> str:
    """The hash of ``template`` with ``collision_count`` (None: no count), as safe-encoded text
    (see the module docstring)."""
    data = to_dict(template) if template is not None else {}
    canonical = json.dumps(prune_empty(data), sort_keys=True, separators=(",", ":")).encode()
    if collision_count is not None:
        canonical += struct.pack("<I", collision_count & 0xFFFFFFFF)
    digest = _FNV32A_OFFSET
    for byte in canonical:
        digest = ((digest ^ byte) * _FNV32_PRIME) & 0xFFFFFFFF
    return safe_encode_string(str(digest))
