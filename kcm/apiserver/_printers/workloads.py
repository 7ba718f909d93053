"""Workloads and what scales them: deployments, replica sets, replication controllers, stateful
sets, daemon sets, jobs, cron jobs, pod templates, controller revisions, horizontal pod
autoscalers and pod disruption budgets (kube 1.24's ``printers.go``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ._format import (
    Obj,
    age,
    as_int,
    bool_ptr,
    containers,
    format_labels,
    format_selector,
    human_duration,
    items,
    mapping,
    parse_time,
    selector_string,
    since,
    template_spec,
)
from ._printer import Column, Printer

__all__ = ["PRINTERS"]

_AGE: Column = ("Age", "string", 0)
_CONTAINERS: tuple[Column, ...] = (("Containers", "string", 1), ("Images", "string", 1))
_WIDE: tuple[Column, ...] = (*_CONTAINERS, ("Selector", "string", 1))
_REPLICAS: tuple[Column, ...] = (
    ("Desired", "integer", 0),
    ("Current", "integer", 0),
    ("Ready", "integer", 0),
    _AGE,
)


def _deployment(obj: Obj, now: datetime) -> list[Any]:
    spec, status = mapping(obj, "spec"), mapping(obj, "status")
    names, images = containers(template_spec(obj))
    return [
        f"{as_int(status.get('readyReplicas'))}/{as_int(spec.get('replicas'))}",
        as_int(status.get("updatedReplicas")),
        as_int(status.get("availableReplicas")),
        age(obj, now),
        names,
        images,
        selector_string(spec.get("selector")),
    ]


def _replica_set(obj: Obj, now: datetime) -> list[Any]:
    spec, status = mapping(obj, "spec"), mapping(obj, "status")
    names, images = containers(template_spec(obj))
    return [
        as_int(spec.get("replicas")),
        as_int(status.get("replicas")),
        as_int(status.get("readyReplicas")),
        age(obj, now),
        names,
        images,
        format_selector(spec.get("selector")),
    ]


def _replication_controller(obj: Obj, now: datetime) -> list[Any]:
    cells = _replica_set(obj, now)
    cells[-1] = format_labels(mapping(obj, "spec").get("selector"))  # a plain label map
    return cells


def _stateful_set(obj: Obj, now: datetime) -> list[Any]:
    spec, status = mapping(obj, "spec"), mapping(obj, "status")
    names, images = containers(template_spec(obj))
    ready = f"{as_int(status.get('readyReplicas'))}/{as_int(spec.get('replicas'))}"
    return [ready, age(obj, now), names, images]


def _daemon_set(obj: Obj, now: datetime) -> list[Any]:
    spec, status = mapping(obj, "spec"), mapping(obj, "status")
    names, images = containers(template_spec(obj))
    return [
        as_int(status.get("desiredNumberScheduled")),
        as_int(status.get("currentNumberScheduled")),
        as_int(status.get("numberReady")),
        as_int(status.get("updatedNumberScheduled")),
        as_int(status.get("numberAvailable")),
        format_labels(template_spec(obj).get("nodeSelector")),
        age(obj, now),
        names,
        images,
        format_selector(spec.get("selector")),
    ]


def _job(obj: Obj, now: datetime) -> list[Any]:
    spec, status = mapping(obj, "spec"), mapping(obj, "status")
    succeeded = as_int(status.get("succeeded"))
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{as_int(spec.get('completions'))}"
    elif as_int(spec.get("parallelism")) > 1:
        completions = f"{succeeded}/1 of {as_int(spec.get('parallelism'))}"
    else:
        completions = f"{succeeded}/1"
    start, end = parse_time(status.get("startTime")), parse_time(status.get("completionTime"))
    duration = "" if start is None else human_duration(((end or now) - start).total_seconds())
    names, images = containers(template_spec(obj))
    return [
        completions,
        duration,
        age(obj, now),
        names,
        images,
        format_selector(spec.get("selector")),
    ]


def _cron_job(obj: Obj, now: datetime) -> list[Any]:
    spec, status = mapping(obj, "spec"), mapping(obj, "status")
    job_spec = mapping(mapping(spec, "jobTemplate"), "spec")
    last = status.get("lastScheduleTime")
    names, images = containers(mapping(mapping(job_spec, "template"), "spec"))
    return [
        spec.get("schedule") or "",
        bool_ptr(spec.get("suspend")),
        len(items(status, "active")),
        since(last, now) if last else "<none>",
        age(obj, now),
        names,
        images,
        format_selector(job_spec.get("selector")),
    ]


def _pod_template(obj: Obj, now: datetime) -> list[Any]:
    template = mapping(obj, "template")
    names, images = containers(mapping(template, "spec"))
    return [names, images, format_labels(mapping(template, "metadata").get("labels"))]


def _controller_revision(obj: Obj, now: datetime) -> list[Any]:
    owner = next(
        (o for o in items(mapping(obj, "metadata"), "ownerReferences") if o.get("controller")),
        None,
    )
    controller = "<none>"
    if owner is not None:
        group = str(owner.get("apiVersion", "")).rpartition("/")[0]
        kind = f"{owner.get('kind', '')}.{group}" if group else str(owner.get("kind", ""))
        controller = f"{kind.lower()}/{owner.get('name', '')}"
    return [controller, as_int(obj.get("revision")), age(obj, now)]


def _int_or_string(value: Any) -> str:
    """``intstr.IntOrString.String()``; ``N/A`` when unset (the PDB printer's)."""
    return "N/A" if value is None else str(value)


def _pod_disruption_budget(obj: Obj, now: datetime) -> list[Any]:
    spec = mapping(obj, "spec")
    return [
        _int_or_string(spec.get("minAvailable")),
        _int_or_string(spec.get("maxUnavailable")),
        as_int(mapping(obj, "status").get("disruptionsAllowed")),
        age(obj, now),
    ]


def _hpa_metric(spec: Obj, status: Obj | None) -> str:
    """One entry of kube's ``formatHPAMetrics``: ``<current>/<target>``."""
    kind = spec.get("type")
    source_key = {
        "External": "external",
        "Pods": "pods",
        "Object": "object",
        "Resource": "resource",
        "ContainerResource": "containerResource",
    }.get(str(kind))
    if source_key is None:
        return "<unknown type>"
    target = mapping(mapping(spec, source_key), "target")
    current_source = mapping(status, source_key) if status is not None else None
    current = mapping(current_source, "current") if current_source is not None else {}
    if kind == "Pods":
        shown = current.get("averageValue") if current_source else None
        return f"{shown or '<unknown>'}/{target.get('averageValue', '0')}"
    if kind in ("Resource", "ContainerResource"):
        if target.get("averageValue") is not None:
            shown = current.get("averageValue") if current_source else None
            return f"{shown or '<unknown>'}/{target['averageValue']}"
        utilization = current.get("averageUtilization")
        shown = f"{utilization}%" if current_source and utilization is not None else "<unknown>"
        wanted = target.get("averageUtilization")
        return f"{shown}/{f'{wanted}%' if wanted is not None else '<auto>'}"
    if target.get("averageValue") is not None:  # External, Object
        value = current.get("averageValue") if current_source else None
        return f"{value or '<unknown>'}/{target['averageValue']} (avg)"
    shown = (current.get("value") or "0") if current_source else "<unknown>"
    return f"{shown}/{target.get('value', '0')}"


def _hpa_v2(obj: Obj) -> tuple[list[Any], list[Any]]:
    """The spec and status metrics in autoscaling/v2 form (an autoscaling/v1 object's CPU
    target and current utilization become a Resource metric, as kube converts them)."""
    spec, status = mapping(obj, "spec"), mapping(obj, "status")
    if "targetCPUUtilizationPercentage" in spec or "currentCPUUtilizationPercentage" in status:
        target = spec.get("targetCPUUtilizationPercentage")
        specs = []
        if target is not None:
            utilization = {"type": "Utilization", "averageUtilization": target}
            specs = [{"type": "Resource", "resource": {"name": "cpu", "target": utilization}}]
        current = status.get("currentCPUUtilizationPercentage")
        statuses = []
        if current is not None:
            now = {"averageUtilization": current}
            statuses = [{"type": "Resource", "resource": {"name": "cpu", "current": now}}]
        return specs, statuses
    return items(spec, "metrics"), items(status, "currentMetrics")


def _format_hpa_metrics(specs: list[Any], statuses: list[Any]) -> str:
    if not specs:
        return "<none>"
    shown = [
        _hpa_metric(spec, statuses[i] if i < len(statuses) else None)
        for i, spec in enumerate(specs)
    ]
    text = ", ".join(shown[:2])
    return f"{text} + {len(shown) - 2} more..." if len(shown) > 2 else text


def _horizontal_pod_autoscaler(obj: Obj, now: datetime) -> list[Any]:
    spec, status = mapping(obj, "spec"), mapping(obj, "status")
    ref = mapping(spec, "scaleTargetRef")
    minimum = spec.get("minReplicas")
    return [
        f"{ref.get('kind', '')}/{ref.get('name', '')}",
        _format_hpa_metrics(*_hpa_v2(obj)),
        "<unset>" if minimum is None else str(minimum),
        as_int(spec.get("maxReplicas")),
        as_int(status.get("currentReplicas")),
        age(obj, now),
    ]


PRINTERS = {
    ("apps", "deployments"): Printer(
        (
            ("Ready", "string", 0),
            ("Up-to-date", "string", 0),
            ("Available", "string", 0),
            _AGE,
            *_WIDE,
        ),
        _deployment,
    ),
    ("apps", "replicasets"): Printer((*_REPLICAS, *_WIDE), _replica_set),
    ("", "replicationcontrollers"): Printer((*_REPLICAS, *_WIDE), _replication_controller),
    ("apps", "statefulsets"): Printer((("Ready", "string", 0), _AGE, *_CONTAINERS), _stateful_set),
    ("apps", "daemonsets"): Printer(
        (
            ("Desired", "integer", 0),
            ("Current", "integer", 0),
            ("Ready", "integer", 0),
            ("Up-to-date", "integer", 0),
            ("Available", "integer", 0),
            ("Node Selector", "string", 0),
            _AGE,
            *_WIDE,
        ),
        _daemon_set,
    ),
    ("batch", "jobs"): Printer(
        (("Completions", "string", 0), ("Duration", "string", 0), _AGE, *_WIDE), _job
    ),
    ("batch", "cronjobs"): Printer(
        (
            ("Schedule", "string", 0),
            ("Suspend", "boolean", 0),
            ("Active", "integer", 0),
            ("Last Schedule", "string", 0),
            _AGE,
            *_WIDE,
        ),
        _cron_job,
    ),
    ("", "podtemplates"): Printer(
        (("Containers", "string", 0), ("Images", "string", 0), ("Pod Labels", "string", 0)),
        _pod_template,
    ),
    ("apps", "controllerrevisions"): Printer(
        (("Controller", "string", 0), ("Revision", "string", 0), _AGE), _controller_revision
    ),
    ("autoscaling", "horizontalpodautoscalers"): Printer(
        (
            ("Reference", "string", 0),
            ("Targets", "string", 0),
            ("MinPods", "string", 0),
            ("MaxPods", "string", 0),
            ("Replicas", "string", 0),
            _AGE,
        ),
        _horizontal_pod_autoscaler,
    ),
    ("policy", "poddisruptionbudgets"): Printer(
        (
            ("Min Available", "string", 0),
            ("Max Unavailable", "string", 0),
            ("Allowed Disruptions", "integer", 0),
            _AGE,
        ),
        _pod_disruption_budget,
    ),
}
