"""``DefaultTolerationSeconds``: pods tolerate not-ready and unreachable nodes for 300 s.

A pod that does not tolerate ``node.kubernetes.io/not-ready`` (or ``unreachable``) with effect
``NoExecute`` gets a toleration of 300 seconds for it, so its node controller evicts it five
minutes after its node goes away; tolerations the pod has are kept.
"""

from __future__ import annotations

from typing import Any, Final

from .._store import Obj
from ._plugin import Attributes, Plugin

__all__ = ["DefaultTolerationSeconds", "admit"]

_TAINTS: Final = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def _tolerates(toleration: Any, key: str) -> bool:
    if not isinstance(toleration, dict):
        return False
    key_matches = toleration.get("key") in (key, None, "")
    return key_matches and toleration.get("effect") in ("NoExecute", None, "")


def admit(pod: Obj) -> None:
    spec = pod.setdefault("spec", {})
    tolerations = list(spec.get("tolerations") or [])
    added = [
        {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
        for key in _TAINTS
        if not any(_tolerates(t, key) for t in tolerations)
    ]
    if added:
        spec["tolerations"] = tolerations + added


class DefaultTolerationSeconds(Plugin):
    """The plugin: pod creates, and pod updates (not their subresources)."""

    name = "DefaultTolerationSeconds"

    def admit(self, a: Attributes) -> None:
        if a.is_pod and (a.operation == "CREATE" or not a.subresource):
            admit(a.obj)
