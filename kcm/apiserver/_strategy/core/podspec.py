"""A pod spec wherever it appears (pods, pod templates, workloads): defaults and validation.

``SetDefaults_PodSpec`` and ``ValidatePodSpec`` in brief: the defaults kubectl describe and
controllers read, and the container checks kubectl users meet most.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..._field_errors import Cause, duplicate, invalid, not_supported, required
from ..._names import dns1123_label
from ..._store import Obj

__all__ = ["RESTART_POLICIES", "default_pod_spec", "validate_pod_spec"]

RESTART_POLICIES: Final = ["Always", "OnFailure", "Never"]


def default_pod_spec(spec: Obj) -> None:
    """kube-apiserver's pod spec defaults (the ones kubectl describe and controllers read)."""
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    _sync_deprecated_service_account(spec)
    for field in ("containers", "initContainers"):
        for c in spec.get(field) or []:
            if not isinstance(c, dict):
                continue
            c.setdefault("terminationMessagePath", "/dev/termination-log")
            c.setdefault("terminationMessagePolicy", "File")
            image = str(c.get("image", ""))
            tag = image.rsplit("/", 1)[-1]
            latest = ":" not in tag or tag.endswith(":latest")
            c.setdefault(
                "imagePullPolicy", "Always" if latest and "@" not in image else "IfNotPresent"
            )
            c.setdefault("resources", {})
            for port in c.get("ports") or []:
                if isinstance(port, dict):
                    port.setdefault("protocol", "TCP")


def _sync_deprecated_service_account(spec: Obj) -> None:
    """``serviceAccount`` is the deprecated alias of ``serviceAccountName``: it fills an empty
    name, and is always written as the name (the v1 conversion's rule)."""
    name = spec.get("serviceAccountName") or spec.get("serviceAccount")
    if name:
        spec["serviceAccountName"] = spec["serviceAccount"] = name
    else:
        spec.pop("serviceAccount", None)


def _validate_containers(containers: Any, field: str, *, require: bool) -> list[Cause]:
    if not containers:
        return [required(field)] if require else []
    if not isinstance(containers, list):
        return [invalid(field, containers, "must be a list")]
    causes: list[Cause] = []
    seen: set[str] = set()
    for i, c in enumerate(containers):
        path = f"{field}[{i}]"
        if not isinstance(c, Mapping):
            causes.append(invalid(path, c, "must be an object"))
            continue
        name = c.get("name") or ""
        if not name:
            causes.append(required(f"{path}.name"))
        else:
            causes.extend(invalid(f"{path}.name", name, msg) for msg in dns1123_label(name))
            if name in seen:
                causes.append(duplicate(f"{path}.name", name))
            seen.add(name)
        if not c.get("image"):
            causes.append(required(f"{path}.image"))
    return causes


def validate_pod_spec(spec: Any, field: str) -> list[Cause]:
    """Field errors of the pod spec at ``field``: containers and restartPolicy."""
    if not isinstance(spec, Mapping):
        return [required(f"{field}.containers")]
    causes = _validate_containers(spec.get("containers"), f"{field}.containers", require=True)
    causes += _validate_containers(
        spec.get("initContainers"), f"{field}.initContainers", require=False
    )
    policy = spec.get("restartPolicy")
    if policy is not None and policy not in RESTART_POLICIES:
        causes.append(not_supported(f"{field}.restartPolicy", policy, RESTART_POLICIES))
    return causes
