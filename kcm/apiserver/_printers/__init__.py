"""kube's printers: the Table columns and cells of every built-in kind, as Kubernetes 1.24's
``pkg/printers/internalversion/printers.go`` defines them (the server always sends the wide
columns; kubectl hides ``priority: 1`` ones without ``-o wide``).

Kinds without a printer in 1.24 (roles, cluster roles, limit ranges, custom resource
definitions, and kinds newer than 1.24) get kube's default table convertor: NAME and CREATED
AT. Pods keep kubectl's newer STATUS logic (sidecars, scheduling gates), which is 1.24's for
every pod 1.24 could run.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from . import cluster, core, pods, workloads
from ._format import Obj, human_duration, parse_time, since
from ._printer import Column, Printer
from .pods import pod_status

__all__ = [
    "Column",
    "Printer",
    "human_duration",
    "parse_time",
    "pod_status",
    "printer_for",
    "since",
]


def _created_at(obj: Obj, now: datetime) -> list[Any]:
    meta = obj.get("metadata")
    return [meta.get("creationTimestamp") if isinstance(meta, dict) else None]


DEFAULT = Printer((("Created At", "date", 0),), _created_at)
"""``rest.NewDefaultTableConvertor``: the creation time as an RFC 3339 date."""

_PRINTERS: dict[tuple[str, str], Printer] = {
    **pods.PRINTERS,
    **workloads.PRINTERS,
    **core.PRINTERS,
    **cluster.PRINTERS,
}


def printer_for(group: str, plural: str) -> Printer:
    """The printer of a built-in resource (kube's default convertor where 1.24 has none)."""
    return _PRINTERS.get((group, plural), DEFAULT)
