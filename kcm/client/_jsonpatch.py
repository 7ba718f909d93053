"""RFC 6902 JSON patch between two JSON documents, used by ``Api.update(old, new)``.

The diff is deliberately simple and predictable:

* objects are diffed key by key (``remove`` / ``add`` / recurse);
* lists of **equal length** are diffed index by index; lists whose length changed are
  ``replace``-d whole (so no index arithmetic can go wrong against a concurrently changed list;
  the ``test`` of ``resourceVersion`` guards the rest);
* any other change (scalar, or a change of JSON type) is a ``replace``.

Because both sides are encoded from the same model, fields the model does not know are absent
from both and never appear in the patch: the server keeps them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["escape_pointer", "json_patch"]


def escape_pointer(token: str) -> str:
    """Escape one JSON-pointer reference token (RFC 6901: ``~`` -> ``~0``, ``/`` -> ``~1``)."""
    return token.replace("~", "~0").replace("/", "~1")


def _same(a: Any, b: Any) -> bool:
    # JSON distinguishes true from 1 and 1 from 1.0 only by type; treat a type change as a change.
    return type(a) is type(b) and a == b


def json_patch(old: Any, new: Any, path: str = "") -> list[dict[str, Any]]:
    """The operations turning JSON value ``old`` into ``new`` (``path`` prefixes every op)."""
    ops: list[dict[str, Any]] = []
    _diff(old, new, path, ops)
    return ops


def _diff(old: Any, new: Any, path: str, ops: list[dict[str, Any]]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            if key not in new:
                ops.append({"op": "remove", "path": f"{path}/{escape_pointer(key)}"})
        for key, value in new.items():
            sub = f"{path}/{escape_pointer(key)}"
            if key not in old:
                ops.append({"op": "add", "path": sub, "value": value})
            else:
                _diff(old[key], value, sub, ops)
        return
    if isinstance(old, list) and isinstance(new, list):
        if len(old) == len(new):
            for i, (a, b) in enumerate(zip(old, new, strict=True)):
                _diff(a, b, f"{path}/{i}", ops)
        else:
            ops.append({"op": "replace", "path": path, "value": new})
        return
    if not _same(old, new):
        ops.append({"op": "replace", "path": path, "value": new})
