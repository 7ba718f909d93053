"""``meta.k8s.io/v1`` Table responses, which ``kubectl get`` asks for (``as=Table``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ._registry import Resource

__all__ = ["to_table", "wants_table"]


def wants_table(accept: str) -> bool:
    return "as=Table" in accept


def _age(ts: str | None) -> str:
    if not ts:
        return "<unknown>"
    try:
        created = datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return "<unknown>"
    seconds = int((datetime.now(UTC) - created).total_seconds())
    if seconds < 120:
        return f"{max(seconds, 0)}s"
    if seconds < 7200:
        return f"{seconds // 60}m"
    if seconds < 172800:
        return f"{seconds // 3600}h"
    return f"{seconds // 86400}d"


def _dig(obj: Any, path: str) -> Any:
    cur = obj
    for part in path.strip(".").split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def _columns(res: Resource) -> list[tuple[str, str, str]]:
    """(name, type, jsonPath or a special key) per column after NAME."""
    if res.crd is not None:
        cols = [
            (c.get("name", ""), c.get("type", "string"), c.get("jsonPath", ""))
            for c in res.crd.get("additionalPrinterColumns") or []
        ]
        return cols or [("Age", "date", ".metadata.creationTimestamp")]
    key = (res.group, res.plural)
    if key == ("", "pods"):
        return [
            ("Ready", "string", "@ready"),
            ("Status", "string", "@phase"),
            ("Restarts", "string", "@restarts"),
            ("Age", "date", ".metadata.creationTimestamp"),
        ]
    if key in (("apps", "deployments"),):
        return [
            ("Ready", "string", "@readyReplicas"),
            ("Up-to-date", "integer", ".status.updatedReplicas"),
            ("Available", "integer", ".status.availableReplicas"),
            ("Age", "date", ".metadata.creationTimestamp"),
        ]
    if key in (("apps", "replicasets"),):
        return [
            ("Desired", "integer", ".spec.replicas"),
            ("Current", "integer", ".status.replicas"),
            ("Ready", "integer", ".status.readyReplicas"),
            ("Age", "date", ".metadata.creationTimestamp"),
        ]
    if key == ("", "namespaces"):
        return [
            ("Status", "string", ".status.phase"),
            ("Age", "date", ".metadata.creationTimestamp"),
        ]
    if key == ("", "configmaps"):
        return [("Data", "integer", "@data"), ("Age", "date", ".metadata.creationTimestamp")]
    return [("Age", "date", ".metadata.creationTimestamp")]


def _cell(obj: dict[str, Any], typ: str, path: str) -> Any:
    if path == "@ready":
        statuses = (obj.get("status") or {}).get("containerStatuses") or []
        total = len((obj.get("spec") or {}).get("containers") or [])
        ready = sum(1 for s in statuses if s.get("ready"))
        return f"{ready}/{total}"
    if path == "@phase":
        meta = obj.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            return "Terminating"
        return (obj.get("status") or {}).get("phase", "")
    if path == "@restarts":
        statuses = (obj.get("status") or {}).get("containerStatuses") or []
        return str(sum(int(s.get("restartCount") or 0) for s in statuses))
    if path == "@readyReplicas":
        ready = (obj.get("status") or {}).get("readyReplicas", 0)
        return f"{ready}/{(obj.get('spec') or {}).get('replicas', 0)}"
    if path == "@data":
        return len(obj.get("data") or {}) + len(obj.get("binaryData") or {})
    value = _dig(obj, path)
    if typ == "date":
        return _age(value if isinstance(value, str) else None)
    if value is None:
        return 0 if typ == "integer" else ""
    if isinstance(value, (dict, list)):
        return str(value)
    return value


def to_table(res: Resource, listed: dict[str, Any], include_object: str) -> dict[str, Any]:
    """A Table of ``listed["items"]`` with kubectl's usual columns for the kind."""
    cols = _columns(res)
    definitions = [
        {
            "name": "Name",
            "type": "string",
            "format": "name",
            "description": "Name must be unique within a namespace.",
            "priority": 0,
        }
    ] + [
        {
            "name": name,
            "type": "string" if typ == "date" else typ,
            "format": "",
            "description": name,
            "priority": 0,
        }
        for name, typ, _ in cols
    ]
    rows = []
    for obj in listed.get("items") or []:
        meta = obj.get("metadata") or {}
        row: dict[str, Any] = {
            "cells": [meta.get("name", "")] + [_cell(obj, t, p) for _, t, p in cols],
        }
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
