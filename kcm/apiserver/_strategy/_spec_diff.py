"""What changed between two specs, for the messages that refuse a change to a fixed spec.

kube-apiserver prints a Go struct diff (go-cmp) of its internal types there; kcm prints the
changed JSON fields, one ``- path: old`` / ``+ path: new`` pair each.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["spec_diff"]


def spec_diff(old: Any, new: Any, path: str = "spec") -> list[str]:
    """The changed fields of two JSON values."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        lines: list[str] = []
        for key in sorted(set(old) | set(new)):
            lines += spec_diff(old.get(key), new.get(key), f"{path}.{key}")
        return lines
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [
            line
            for i, (a, b) in enumerate(zip(old, new, strict=True))
            for line in spec_diff(a, b, f"{path}[{i}]")
        ]
    if old == new:
        return []
    shown = [f"- {path}: {json.dumps(old)}"] if old is not None else []
    return shown + ([f"+ {path}: {json.dumps(new)}"] if new is not None else [])
