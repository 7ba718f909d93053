"""A quota's usage in its namespace, recalculated from the objects (kube's ``CalculateUsage``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from ._evaluators import evaluators_for_quota
from ._resource_list import ResourceList, add, mask, resource_list, to_json

__all__ = ["ListObjects", "calculate_usage", "next_status"]

Obj = Mapping[str, Any]
ListObjects = Callable[[str, str], Iterable[Obj] | None]
"""``(group, resource) -> the namespace's objects``, or None when that kind cannot be listed
(not served): its names are left out of the result."""


def calculate_usage(quota: Obj, list_objects: ListObjects, now: datetime) -> ResourceList:
    """What the objects ``list_objects`` returns use of ``quota``'s ``spec.hard``, honouring
    its scopes; names no evaluator fills (or whose kind cannot be listed) are absent."""
    spec = quota.get("spec") or {}
    hard_names = set(resource_list(spec.get("hard")))
    evaluators = evaluators_for_quota(hard_names)
    matched: set[str] = set()
    usage: ResourceList = {}
    for evaluator in evaluators:
        names = evaluator.matching_resources(hard_names)
        if not names:
            continue
        items = list_objects(evaluator.group, evaluator.resource)
        if items is None:
            continue
        matched.update(names)
        usage = add(usage, evaluator.usage_of_all(items, names, spec, now))
    return mask(usage, matched)


def next_status(quota: Obj, usage: ResourceList) -> dict[str, Any] | None:
    """The status the quota controller writes: ``hard`` from the spec, ``used`` the previous
    usage overlaid with ``usage``, both limited to the hard names. None when nothing changed."""
    spec_hard = dict((quota.get("spec") or {}).get("hard") or {})
    status = quota.get("status") or {}
    hard = resource_list(spec_hard)
    before = resource_list(status.get("used"))
    used = mask({**before, **usage}, hard)
    dirty = (
        resource_list(status.get("hard")) != hard
        or status.get("hard") is None
        or status.get("used") is None
        or not _same(used, before)
    )
    if not dirty:
        return None
    return {"hard": to_json(hard), "used": to_json(used)}


def _same(a: ResourceList, b: ResourceList) -> bool:
    return a.keys() == b.keys() and all(a[k] == b[k] for k in a)
