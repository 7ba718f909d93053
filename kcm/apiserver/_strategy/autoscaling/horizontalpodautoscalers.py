"""HorizontalPodAutoscalers: stored as autoscaling/v2, served as v1 or v2 (kube's conversion).

autoscaling/v1 knows only a CPU utilization target; kube-apiserver converts between the
versions and keeps what v1 cannot say in annotations (``autoscaling.alpha.kubernetes.io/
metrics``, ``.../behavior``, ``.../conditions``, ``.../current-metrics``), so a v1 client's
update does not lose a v2 client's metrics. A v1 body (``kubectl autoscale`` writes one) is
converted to v2 when it is decoded, so every write is stored as v2; reads under v1 convert
back. Watches send the stored (v2) form.
"""

from __future__ import annotations

import json
from typing import Any

from ..._store import Obj, deep_copy
from .._base import Strategy

__all__ = ["HorizontalPodAutoscalerStrategy"]

_V1, _V2 = "autoscaling/v1", "autoscaling/v2"
_PREFIX = "autoscaling.alpha.kubernetes.io/"
_METRICS, _BEHAVIOR = _PREFIX + "metrics", _PREFIX + "behavior"
_CONDITIONS, _CURRENT = _PREFIX + "conditions", _PREFIX + "current-metrics"


def _is_cpu_utilization(metric: Any, key: str) -> bool:
    resource = metric.get("resource") or {} if isinstance(metric, dict) else {}
    value = resource.get(key) or {}
    return (
        metric.get("type") == "Resource"
        and resource.get("name") == "cpu"
        and value.get("averageUtilization") is not None
    )


def _loads(annotations: dict[str, str], key: str) -> Any:
    text = annotations.pop(key, None)
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def to_v2(obj: Obj) -> None:
    """A v1 HorizontalPodAutoscaler as v2, in place."""
    obj["apiVersion"] = _V2
    meta = obj.setdefault("metadata", {})
    annotations = dict(meta.get("annotations") or {})
    spec = obj.get("spec")
    if isinstance(spec, dict):
        target = spec.pop("targetCPUUtilizationPercentage", None)
        metrics = []
        if target is not None:
            utilization = {"type": "Utilization", "averageUtilization": target}
            metrics.append({"type": "Resource", "resource": {"name": "cpu", "target": utilization}})
        metrics += _loads(annotations, _METRICS) or []
        if metrics:
            spec["metrics"] = metrics
        behavior = _loads(annotations, _BEHAVIOR)
        if behavior:
            spec["behavior"] = behavior
    status = obj.get("status")
    if isinstance(status, dict):
        current = status.pop("currentCPUUtilizationPercentage", None)
        metrics = []
        if current is not None:
            value = {"averageUtilization": current}
            metrics.append({"type": "Resource", "resource": {"name": "cpu", "current": value}})
        metrics += _loads(annotations, _CURRENT) or []
        if metrics:
            status["currentMetrics"] = metrics
        conditions = _loads(annotations, _CONDITIONS)
        if conditions:
            status["conditions"] = conditions
    for key in (_METRICS, _BEHAVIOR, _CONDITIONS, _CURRENT):
        annotations.pop(key, None)
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)


def to_v1(stored: Obj) -> Obj:
    """The stored v2 HorizontalPodAutoscaler as v1 (what v1 cannot say in annotations)."""
    obj = deep_copy(stored)
    obj["apiVersion"] = _V1
    meta = obj.setdefault("metadata", {})
    annotations = dict(meta.get("annotations") or {})
    spec = obj.get("spec") or {}
    metrics = spec.pop("metrics", None) or []
    cpu = [m for m in metrics if _is_cpu_utilization(m, "target")]
    if cpu:
        spec["targetCPUUtilizationPercentage"] = cpu[0]["resource"]["target"]["averageUtilization"]
    rest = [m for m in metrics if not _is_cpu_utilization(m, "target")]
    if rest:
        annotations[_METRICS] = json.dumps(rest, separators=(",", ":"))
    behavior = spec.pop("behavior", None)
    if behavior:
        annotations[_BEHAVIOR] = json.dumps(behavior, separators=(",", ":"))
    status = obj.get("status")
    if isinstance(status, dict):
        status.setdefault("currentReplicas", 0)
        current = status.pop("currentMetrics", None) or []
        cpu = [m for m in current if _is_cpu_utilization(m, "current")]
        if cpu:
            value = cpu[0]["resource"]["current"]["averageUtilization"]
            status["currentCPUUtilizationPercentage"] = value
        others = [m for m in current if not _is_cpu_utilization(m, "current")]
        if others:
            annotations[_CURRENT] = json.dumps(others, separators=(",", ":"))
        conditions = status.pop("conditions", None)
        if conditions:
            annotations[_CONDITIONS] = json.dumps(conditions, separators=(",", ":"))
    if annotations:
        meta["annotations"] = annotations
    return obj


class HorizontalPodAutoscalerStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/autoscaling/horizontalpodautoscaler`` conversion."""

    status_zero = {"currentMetrics": None, "desiredReplicas": 0}  # Go always writes these
    status_omitempty = ("currentReplicas",)  # v2's ``omitempty`` (v1 always writes it)

    def decode(self, obj: Obj) -> None:
        if obj.get("apiVersion") == _V1:
            to_v2(obj)

    def present(self, obj: Obj) -> Obj:
        if self.resource.version == "v1":
            return to_v1(obj) if obj.get("apiVersion") != _V1 else obj
        if obj.get("apiVersion") == _V1:  # written before conversion existed
            converted = deep_copy(obj)
            to_v2(converted)
            return converted
        return obj
