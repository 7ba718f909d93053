"""What a pod update may change (``ValidatePodUpdate``) and what a status write may say
(``ValidatePodStatusUpdate``).

A pod's spec is fixed once created, except container and init container images, a shorter
``activeDeadlineSeconds``, more tolerations (existing ones may change only their
``tolerationSeconds``) and a negative ``terminationGracePeriodSeconds`` raised to 1. Anything
else is refused with kube-apiserver's message, followed by what changed (see
:mod:`.._spec_diff`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any, Final

from ..._field_errors import Cause, forbidden, invalid, required
from ..._store import Obj, deep_copy
from .._spec_diff import spec_diff

__all__ = ["sync_pod_ips", "validate_pod_status_update", "validate_pod_update"]

_MAX_INT32: Final = 2**31 - 1
_IMMUTABLE_SPEC: Final = (
    "pod updates may not change fields other than `spec.containers[*].image`, "
    "`spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only "
    "additions to existing tolerations) or `spec.terminationGracePeriodSeconds` (allow it to be "
    "set to 1 if it was previously negative)"
)


def _containers(spec: Mapping[str, Any], field: str) -> list[Any]:
    return list(spec.get(field) or [])


def _container_updates(new: list[Any], old: list[Any], field: str) -> tuple[list[Cause], bool]:
    """``ValidateContainerUpdates``: the same containers, each with an image."""
    if len(new) != len(old):
        return [forbidden(field, "pod updates may not add or remove containers")], True
    causes: list[Cause] = []
    for i, container in enumerate(new):
        image = str(container.get("image") or "")
        if not image:
            causes.append(required(f"{field}[{i}].image"))
        if image.strip() != image:
            causes.append(
                invalid(
                    f"{field}[{i}].image", image, "must not have leading or trailing whitespace"
                )
            )
    return causes, False


def _only_added_tolerations(new: list[Any], old: list[Any]) -> list[Cause]:
    for before in old:
        if not any(_same_except_seconds(before, t) for t in new):
            return [
                forbidden(
                    "spec.tolerations",
                    "existing toleration can not be modified except its tolerationSeconds",
                )
            ]
    return []


def _same_except_seconds(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    strip = {"tolerationSeconds"}
    return {k: v for k, v in a.items() if k not in strip} == {
        k: v for k, v in b.items() if k not in strip
    }


def validate_pod_update(new: Obj, old: Obj) -> list[Cause]:
    """The spec rules of ``ValidatePodUpdate`` (metadata and the new spec are the caller's)."""
    spec: Mapping[str, Any] = new.get("spec") or {}
    before: Mapping[str, Any] = old.get("spec") or {}
    causes: list[Cause] = []
    for field in ("containers", "initContainers"):
        found, stop = _container_updates(
            _containers(spec, field), _containers(before, field), f"spec.{field}"
        )
        causes += found
        if stop:
            return causes
    deadline, old_deadline = spec.get("activeDeadlineSeconds"), before.get("activeDeadlineSeconds")
    if deadline is not None:
        if not 0 <= deadline <= _MAX_INT32:
            bad = f"must be between 0 and {_MAX_INT32}, inclusive"
            return [*causes, invalid("spec.activeDeadlineSeconds", deadline, bad)]
        if old_deadline is not None and old_deadline < deadline:
            bad = "must be less than or equal to previous value"
            return [*causes, invalid("spec.activeDeadlineSeconds", deadline, bad)]
    elif old_deadline is not None:
        causes.append(
            invalid(
                "spec.activeDeadlineSeconds",
                None,
                "must not update from a positive integer to nil value",
            )
        )
    causes += _only_added_tolerations(
        list(spec.get("tolerations") or []), list(before.get("tolerations") or [])
    )
    if spec == before:
        return causes
    munged = deep_copy(dict(spec))
    for field in ("containers", "initContainers"):
        for container, previous in zip(
            munged.get(field) or [], before.get(field) or [], strict=False
        ):
            if "image" in previous:
                container["image"] = previous["image"]
            else:
                container.pop("image", None)
    for field in ("activeDeadlineSeconds", "tolerations"):
        munged.pop(field, None)
        if field in before:
            munged[field] = before[field]
    grace, old_grace = (
        munged.get("terminationGracePeriodSeconds"),
        before.get("terminationGracePeriodSeconds"),
    )
    if old_grace is not None and old_grace < 0 and grace == 1:
        munged["terminationGracePeriodSeconds"] = old_grace
    if munged != before:
        changes = "\n".join(spec_diff(before, munged))
        causes.append(forbidden("spec", f"{_IMMUTABLE_SPEC}\n{changes}\n"))
    return causes


def sync_pod_ips(pod: Obj) -> None:
    """``status.podIP`` and ``status.podIPs[0]`` say the same (``podIP`` wins when they
    differ), as the v1 conversion keeps them."""
    status = pod.get("status")
    if not isinstance(status, dict):
        return
    ip = status.get("podIP") or ""
    ips = list(status.get("podIPs") or [])
    if (ips and ip != (ips[0].get("ip") or "")) or (ip and not ips):
        ips = [{"ip": ip}]
    if ips:
        status["podIPs"] = ips
        status["podIP"] = ips[0].get("ip") or ""
    if not status.get("podIP"):
        status.pop("podIP", None)


def _ip_errors(ip: str) -> list[str]:
    try:
        ipaddress.ip_address(ip)
    except ValueError:
        return ["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"]
    return []


def validate_pod_status_update(new: Obj, old: Obj) -> list[Cause]:
    """The status rules of ``ValidatePodStatusUpdate``: the node is bound through
    ``/binding``, pod IPs are IPs (one per family, no duplicates)."""
    causes: list[Cause] = []
    if (new.get("spec") or {}).get("nodeName") != (old.get("spec") or {}).get("nodeName"):
        causes.append(forbidden("status.nodeName", "may not be changed directly"))
    ips = [str(p.get("ip") or "") for p in (new.get("status") or {}).get("podIPs") or []]
    for i, ip in enumerate(ips):
        causes += [invalid(f"status.podIPs[{i}]", ip, msg) for msg in _ip_errors(ip)]
    if len(ips) > 1:
        families = set()
        for ip in ips:
            try:
                families.add(ipaddress.ip_address(ip).version)
            except ValueError:
                pass
        if len(families) != 2 or len(ips) > 2:
            causes.append(
                {
                    "reason": "FieldValueInvalid",
                    "message": "Invalid value: "
                    + "[]core.PodIP{"
                    + ", ".join(f'core.PodIP{{IP:"{ip}"}}' for ip in ips)
                    + "}: may specify no more than one IP for each IP family",
                    "field": "status.podIPs",
                }
            )
    return causes
