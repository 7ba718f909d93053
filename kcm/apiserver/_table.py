"""``meta.k8s.io/v1`` Table responses, which ``kubectl get`` asks for (``as=Table``).

The columns and cells of built-in kinds are kube's printers (:mod:`._printers`); a custom
resource's are its CRD's ``additionalPrinterColumns``. The server always sends every column;
kubectl shows those with ``priority: 1`` only with ``-o wide``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from . import _jsonpath as jsonpath
from ._printers import Printer as _Printer
from ._printers import human_duration, parse_time, pod_status, printer_for
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


_CREATION_DESCRIPTION = (
    "CreationTimestamp is a timestamp representing the server time when this object was "
    "created. It is not guaranteed to be set in happens-before order across separate "
    "operations. Clients may not set this value. It is represented in RFC3339 form and is in "
    "UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)
_CRD_AGE = {
    "name": "Age",
    "type": "date",
    "description": _CREATION_DESCRIPTION,
    "jsonPath": ".metadata.creationTimestamp",
}


def _crd_columns(crd: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A CRD version's printer columns (AGE when it has none, as apiextensions-apiserver)."""
    return list(crd.get("additionalPrinterColumns") or []) or [_CRD_AGE]


def _crd_definitions(crd: Mapping[str, Any]) -> list[dict[str, Any]]:
    """apiextensions-apiserver's table convertor headers: NAME, then each printer column as
    declared, described by its JSON path unless it has a description."""
    definitions: list[dict[str, Any]] = [
        {
            "name": "Name",
            "type": "string",
            "format": "name",
            "description": _NAME_DESCRIPTION,
            "priority": 0,
        }
    ]
    for c in _crd_columns(crd):
        path = str(c.get("jsonPath", ""))
        definitions.append(
            {
                "name": str(c.get("name", "")),
                "type": str(c.get("type", "")),
                "format": str(c.get("format") or ""),
                "description": str(c.get("description") or "")
                or f"Custom resource definition column (in JSONPath format): {path}",
                "priority": int(c.get("priority") or 0),
            }
        )
    return definitions


def _first(obj: Any, path: str) -> Any:
    """The first value a printer column's JSON path selects (None: none)."""
    found = jsonpath.find(obj, path)
    return found[0] if found else None


def _crd_cell(kind: str, value: Any, now: datetime) -> Any:
    """``cellForJSONValue``: the value if it has the column's type (a ``date`` as an age, a
    ``string`` column prints any value), else empty."""
    if value is None:
        return None
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "string":
        if isinstance(value, str):
            return value
        if isinstance(value, Mapping | list):
            return json.dumps(value, separators=(",", ":"))
        return str(value).lower() if isinstance(value, bool) else str(value)
    if kind == "integer" and number:
        return int(value)
    if kind == "number" and number:  # a float64: Go writes a whole one without ".0"
        return int(value) if float(value).is_integer() else float(value)
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "date" and isinstance(value, str):
        return _since(value, now) if parse_time(value) is not None else "<invalid>"
    return None


def _crd_printer(crd: Mapping[str, Any]) -> _Printer:
    """A CRD version's printer columns (their JSON paths, filters included)."""
    specs = _crd_columns(crd)
    columns = tuple(
        (str(c.get("name", "")), str(c.get("type", "string")), int(c.get("priority") or 0))
        for c in specs
    )

    def cells(obj: Obj, now: datetime) -> list[Any]:
        return [
            _crd_cell(str(c.get("type", "")), _first(obj, str(c.get("jsonPath", ""))), now)
            for c in specs
        ]

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
    if res.crd is not None:
        definitions = _crd_definitions(res.crd)
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
