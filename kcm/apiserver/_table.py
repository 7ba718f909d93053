"""``meta.k8s.io/v1`` Table responses, which ``kubectl get`` asks for (``as=Table``).

The columns and cells of built-in kinds are kube's printers (:mod:`._printers`); a custom
resource's are its CRD's ``additionalPrinterColumns``. The server always sends every column;
kubectl shows those with ``priority: 1`` only with ``-o wide``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ._printers import Printer as _Printer
from ._printers import human_duration, pod_status, printer_for
from ._printers import since as _since
from ._registry import Resource

__all__ = ["human_duration", "pod_status", "to_table", "wants_table"]

Obj = Mapping[str, Any]

_NAME_DESCRIPTION = (
    "Name must be unique within a namespace. Is required when creating resources, although "
    "some resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated. More info: "
    "http://kubernetes.io/docs/user-guide/identifiers#names"
)


def wants_table(accept: str) -> bool:
    return "as=Table" in accept


_DEFAULT = _Printer(
    (("Age", "string", 0),),
    lambda obj, now: [_since((obj.get("metadata") or {}).get("creationTimestamp"), now)],
)
"""A custom resource without printer columns: NAME and AGE."""


def _dig(obj: Any, path: str) -> Any:
    cur = obj
    for part in path.strip(".").split("."):
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(part)
    return cur


def _crd_printer(crd: Mapping[str, Any]) -> _Printer:
    """A CRD's ``additionalPrinterColumns`` (simple ``.a.b`` JSON paths), else AGE."""
    specs = list(crd.get("additionalPrinterColumns") or [])
    if not specs:
        return _DEFAULT
    columns = tuple(
        (str(c.get("name", "")), str(c.get("type", "string")), int(c.get("priority") or 0))
        for c in specs
    )

    def cells(obj: Obj, now: datetime) -> list[Any]:
        out: list[Any] = []
        for c in specs:
            value = _dig(obj, str(c.get("jsonPath", "")))
            if value is None:
                out.append(None)  # kubectl prints <none>
            elif c.get("type") == "date":
                out.append(_since(value, now))
            elif isinstance(value, Mapping | list | tuple):
                out.append(str(value))
            else:
                out.append(value)
        return out

    return _Printer(columns, cells)


def to_table(
    res: Resource, listed: dict[str, Any], include_object: str, now: datetime
) -> dict[str, Any]:
    """A Table of ``listed["items"]`` with kube's printer columns for the kind; ages and
    durations are measured to ``now`` (the server's clock)."""
    printer = _crd_printer(res.crd) if res.crd is not None else printer_for(res.group, res.plural)
    definitions = [
        {
            "name": name,
            "type": typ,
            "format": "",
            "description": name,
            "priority": priority,
        }
        for name, typ, priority in printer.columns
    ]
    name_column = {
        "name": "Name",
        "type": "string",
        "format": "name",
        "description": _NAME_DESCRIPTION,
        "priority": printer.name_priority,
    }
    definitions.insert(printer.name_at, name_column)
    rows = []
    for obj in listed.get("items") or []:
        meta = obj.get("metadata") or {}
        cells = printer.cells(obj, now)
        cells.insert(printer.name_at, printer.name_of(obj))
        row: dict[str, Any] = {"cells": cells}
        if include_object == "Object":
            row["object"] = obj
        elif include_object != "None":
            row["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": meta,
            }
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": listed.get("metadata") or {},
        "columnDefinitions": definitions,
        "rows": rows,
    }
