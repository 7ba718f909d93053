"""The replica calculation (kube's ``replica_calculator.go``): from per-pod metric values to
a proposed replica count, with the tolerance and the handling of unready, missing and ignored
pods.

Pure functions over plain values (milli-units, datetimes) so every rule is unit-testable; the
controller supplies the pods from its cache and the metrics from ``metrics.k8s.io``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from kcm.models import parse_quantity

__all__ = [
    "PodMetric",
    "ReplicaCalculator",
    "ReplicaError",
    "ResourceProposal",
    "group_pods",
]

Obj = Mapping[str, Any]


class ReplicaError(Exception):
    """No replica count can be computed (the message is kube's)."""


@dataclass(frozen=True, slots=True)
class PodMetric:
    """One pod's metric value (milli-units), and when and over what window it was taken."""

    value: int
    timestamp: datetime | None = None
    window: timedelta = timedelta(0)


@dataclass(frozen=True, slots=True)
class ResourceProposal:
    """What the calculation proposes, and the current value the HPA's status shows."""

    replicas: int
    raw_average: int
    """The average value per pod, milli-units."""
    utilization: int | None = None
    """Percent of requests, for utilization targets."""


@dataclass(slots=True)
class _Groups:
    ready: int = 0
    unready: set[str] = field(default_factory=set)
    missing: set[str] = field(default_factory=set)
    ignored: set[str] = field(default_factory=set)


def _time(value: object) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str) and value:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    return None


def _ready_condition(pod: Obj) -> Obj | None:
    for c in (pod.get("status") or {}).get("conditions") or ():
        if c.get("type") == "Ready":
            return c  # type: ignore[no-any-return]
    return None


def group_pods(
    pods: Sequence[Obj],
    metrics: Mapping[str, PodMetric],
    resource: str,
    now: datetime,
    cpu_initialization_period: timedelta,
    initial_readiness_delay: timedelta,
) -> _Groups:
    """kube's ``groupPods``: deleted and failed pods are ignored, pending pods and (for CPU)
    pods not ready or too fresh to trust are unready, pods without a metric are missing, the
    rest count as ready."""
    groups = _Groups()
    for pod in pods:
        name = pod["metadata"]["name"]
        phase = (pod.get("status") or {}).get("phase")
        if pod["metadata"].get("deletionTimestamp") or phase == "Failed":
            groups.ignored.add(name)
            continue
        if phase == "Pending":
            groups.unready.add(name)
            continue
        metric = metrics.get(name)
        if metric is None:
            groups.missing.add(name)
            continue
        if resource == "cpu" and _cpu_unready(
            pod, metric, now, cpu_initialization_period, initial_readiness_delay
        ):
            groups.unready.add(name)
            continue
        groups.ready += 1
    return groups


def _cpu_unready(
    pod: Obj, metric: PodMetric, now: datetime, init_period: timedelta, readiness_delay: timedelta
) -> bool:
    condition = _ready_condition(pod)
    started = _time((pod.get("status") or {}).get("startTime"))
    if condition is None or started is None:
        return True
    transition = _time(condition.get("lastTransitionTime")) or started
    if started + init_period > now:  # still initialising: a sample must postdate readiness
        stamp = metric.timestamp or now
        return condition.get("status") == "False" or stamp < transition + metric.window
    # unready and never ready since it started
    return condition.get("status") == "False" and started + readiness_delay > transition


def pod_requests(pods: Sequence[Obj], resource: str) -> dict[str, int]:
    """Each pod's request of ``resource`` in milli-units, summed over its containers.

    Raises:
        ReplicaError: a container has no request for it.
    """
    out: dict[str, int] = {}
    for pod in pods:
        total = 0
        for c in (pod.get("spec") or {}).get("containers") or ():
            requests = (c.get("resources") or {}).get("requests") or {}
            if resource not in requests:
                raise ReplicaError(f"missing request for {resource}")
            total += math.ceil(parse_quantity(requests[resource]) * 1000)
        out[pod["metadata"]["name"]] = total
    return out


def _utilization_ratio(
    metrics: Mapping[str, PodMetric], requests: Mapping[str, int], target: int
) -> tuple[float, int, int]:
    metrics_total = requests_total = entries = 0
    for name, metric in metrics.items():
        if name not in requests:
            continue
        metrics_total += metric.value
        requests_total += requests[name]
        entries += 1
    if requests_total == 0:
        raise ReplicaError("no metrics returned matched known pods")
    utilization = metrics_total * 100 // requests_total
    return utilization / target, utilization, metrics_total // entries


def _value_ratio(metrics: Mapping[str, PodMetric], target: int) -> tuple[float, int]:
    usage = sum(m.value for m in metrics.values()) // len(metrics)
    return usage / target, usage


@dataclass(frozen=True, slots=True)
class ReplicaCalculator:
    """kube's ReplicaCalculator: ``tolerance`` (``--horizontal-pod-autoscaler-tolerance``),
    ``cpu_initialization_period`` and ``initial_readiness_delay`` (the ``-cpu-initialization-
    period`` and ``-initial-readiness-delay`` flags)."""

    tolerance: float = 0.1
    cpu_initialization_period: timedelta = timedelta(minutes=5)
    initial_readiness_delay: timedelta = timedelta(seconds=30)

    def _groups(
        self, pods: Sequence[Obj], metrics: dict[str, PodMetric], resource: str, now: datetime
    ) -> _Groups:
        if not pods:
            raise ReplicaError("no pods returned by selector while calculating replica count")
        groups = group_pods(
            pods,
            metrics,
            resource,
            now,
            self.cpu_initialization_period,
            self.initial_readiness_delay,
        )
        for name in groups.ignored | groups.unready:
            metrics.pop(name, None)
        return groups

    def utilization_replicas(
        self,
        current: int,
        target_utilization: int,
        resource: str,
        pods: Sequence[Obj],
        raw_metrics: Mapping[str, PodMetric],
        now: datetime,
    ) -> ResourceProposal:
        """``GetResourceReplicas``: a target percentage of the pods' requests."""
        metrics = dict(raw_metrics)
        groups = self._groups(pods, metrics, resource, now)
        requests = pod_requests(pods, resource)
        if not metrics:
            raise ReplicaError("did not receive metrics for any ready pods")
        ratio, utilization, raw = _utilization_ratio(metrics, requests, target_utilization)

        def proposal(replicas: int) -> ResourceProposal:
            return ResourceProposal(replicas, raw, utilization)

        rebalance = bool(groups.unready) and ratio > 1.0
        if not rebalance and not groups.missing:
            if abs(1.0 - ratio) <= self.tolerance:
                return proposal(current)
            return proposal(math.ceil(ratio * groups.ready))
        for name in groups.missing:  # assume the worst for the direction of the change
            if ratio < 1.0:
                metrics[name] = PodMetric(requests[name])
            elif ratio > 1.0:
                metrics[name] = PodMetric(0)
        if rebalance:
            for name in groups.unready:
                metrics[name] = PodMetric(0)
        new_ratio, _, _ = _utilization_ratio(metrics, requests, target_utilization)
        return proposal(self._rebalanced(current, ratio, new_ratio, len(metrics)))

    def value_replicas(
        self,
        current: int,
        target_value: int,
        resource: str,
        pods: Sequence[Obj],
        raw_metrics: Mapping[str, PodMetric],
        now: datetime,
    ) -> ResourceProposal:
        """``calcPlainMetricReplicas``: a target average value per pod (milli-units)."""
        metrics = dict(raw_metrics)
        groups = self._groups(pods, metrics, resource, now)
        if not metrics:
            raise ReplicaError("did not receive metrics for any ready pods")
        ratio, usage = _value_ratio(metrics, target_value)
        rebalance = bool(groups.unready) and ratio > 1.0
        if not rebalance and not groups.missing:
            if abs(1.0 - ratio) <= self.tolerance:
                return ResourceProposal(current, usage)
            return ResourceProposal(math.ceil(ratio * groups.ready), usage)
        for name in groups.missing:
            if ratio < 1.0:
                metrics[name] = PodMetric(target_value)
            elif ratio > 1.0:
                metrics[name] = PodMetric(0)
        if rebalance:
            for name in groups.unready:
                metrics[name] = PodMetric(0)
        new_ratio, _ = _value_ratio(metrics, target_value)
        return ResourceProposal(self._rebalanced(current, ratio, new_ratio, len(metrics)), usage)

    def _rebalanced(self, current: int, ratio: float, new_ratio: float, count: int) -> int:
        """The count after filling in missing and unready pods, unless that would reverse
        the direction of the change or land within the tolerance."""
        flipped = (ratio < 1.0 < new_ratio) or (ratio > 1.0 > new_ratio)
        if abs(1.0 - new_ratio) <= self.tolerance or flipped:
            return current
        replicas = math.ceil(new_ratio * count)
        if (new_ratio < 1.0 and replicas > current) or (new_ratio > 1.0 and replicas < current):
            return current
        return replicas
