"""Whether a write fits the namespace's quotas, and what it adds to their usage (the check of
kube-apiserver's ``ResourceQuota`` admission plugin, without the batching around it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ._evaluators import Evaluator
from ._resource_list import (
    add,
    equals,
    less_than_or_equal,
    mask,
    pretty_print,
    remove_zeros,
    resource_list,
    subtract_non_negative,
    to_json,
)

__all__ = ["QuotaExceeded", "charge"]

Obj = Mapping[str, Any]


class QuotaExceeded(Exception):
    """The write is refused; the message is kube's (the server answers 403 with it)."""


def charge(
    quotas: Sequence[Obj],
    evaluator: Evaluator,
    operation: str,
    obj: Obj,
    old: Obj | None,
    now: datetime,
) -> dict[str, dict[str, str]]:
    """Check a write of ``obj`` against ``quotas`` (the namespace's ResourceQuotas).

    Returns:
        The new ``status.used`` of every quota the write charges, by quota name (empty:
        nothing to charge).

    Raises:
        QuotaExceeded: a quota is exceeded, has no usage yet for what it limits, or requires
            requests/limits the object lacks (kube's texts).
    """
    if not evaluator.handles(operation):
        return {}
    interesting: list[Obj] = []
    for quota in quotas:
        if not evaluator.matches(quota, obj):
            continue
        name = quota["metadata"]["name"]
        status = quota.get("status") or {}
        hard_names = list((status.get("hard") or {}).keys())
        restricted = evaluator.matching_resources(hard_names)
        why = evaluator.constraints(restricted, obj)
        if why is not None:
            raise QuotaExceeded(f"failed quota: {name}: {why}")
        used = status.get("used") or {}
        if any(n not in used for n in restricted):
            raise QuotaExceeded(
                f"status unknown for quota: {name}, resources: {','.join(sorted(restricted))}"
            )
        interesting.append(quota)
    delta = evaluator.usage(obj, now)
    negative = sorted(n for n, q in delta.items() if q.value < 0)
    if negative:
        raise QuotaExceeded(f"quota usage is negative for resource(s): {','.join(negative)}")
    had_version = old is not None and (old.get("metadata") or {}).get("resourceVersion")
    if operation == "UPDATE" and old is not None and had_version:
        delta = subtract_non_negative(delta, evaluator.usage(old, now))
    delta = remove_zeros(delta)
    if not delta or not interesting:
        return {}
    charged: dict[str, dict[str, str]] = {}
    for quota in interesting:
        status = quota.get("status") or {}
        hard = resource_list(status.get("hard"))
        used = resource_list(status.get("used"))
        requested = mask(delta, hard)
        new_used = add(used, requested)
        allowed, exceeded = less_than_or_equal(mask(new_used, requested), hard)
        if not allowed:
            raise QuotaExceeded(
                f"exceeded quota: {quota['metadata']['name']}, "
                f"requested: {pretty_print(mask(requested, exceeded))}, "
                f"used: {pretty_print(mask(used, exceeded))}, "
                f"limited: {pretty_print(mask(hard, exceeded))}"
            )
        if not equals(new_used, used):
            charged[quota["metadata"]["name"]] = to_json(new_used)
    return charged
