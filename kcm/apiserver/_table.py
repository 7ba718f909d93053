"""``meta.k8s.io/v1`` Table responses, which ``kubectl get`` asks for (``as=Table``).

The columns and cells follow kube's printers (``pkg/printers/internalversion/printers.go``):
the server always sends every column, and columns with ``priority: 1`` are the ones kubectl
shows only with ``-o wide``. Kinds without a printer here get NAME and AGE, as kube's default
table convertor gives them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from . import _jsonpath as jsonpath
from ._registry import Resource

__all__ = ["human_duration", "pod_status", "to_table", "wants_table"]

Obj = Mapping[str, Any]


def wants_table(accept: str) -> bool:
    return "as=Table" in accept


# -- helpers (apimachinery's duration.HumanDuration, labels.Selector.String, ...) -------------


def human_duration(seconds: float) -> str:
    """apimachinery's ``duration.HumanDuration``: ``59s``, ``2m``, ``5m30s``, ``3h``, ``2d4h``..."""
    whole = int(seconds)
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 120:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        rest = whole % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = whole // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d{rest}h" if rest else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        rest = (hours // 24) % 365
        years = hours // 24 // 365
        return f"{years}y{rest}d" if rest else f"{years}y"
    return f"{hours // 24 // 365}y"


def _time(ts: Any) -> datetime | None:
    if not isinstance(ts, str) or not ts:
        return None
    try:
        parsed = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _since(ts: Any, now: datetime) -> str:
    """kube's ``translateTimestampSince``: ``<unknown>`` for no timestamp."""
    when = _time(ts)
    if when is None:
        return "<unknown>"
    return human_duration((now - when).total_seconds())


def _age(obj: Obj, now: datetime) -> str:
    return _since(_m(obj, "metadata").get("creationTimestamp"), now)


def _m(obj: Any, key: str) -> Mapping[str, Any]:
    """``obj[key]`` as a mapping (``{}`` when missing or null)."""
    value = obj.get(key) if isinstance(obj, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def _l(obj: Any, key: str) -> list[Any]:
    value = obj.get(key) if isinstance(obj, Mapping) else None
    return list(value) if isinstance(value, list | tuple) else []


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _selector(selector: Any) -> str:
    """``metav1.LabelSelectorAsSelector(s).String()``: requirements sorted by key."""
    if not isinstance(selector, Mapping):
        return ""
    parts: list[tuple[str, str]] = [
        (str(k), f"{k}={v}") for k, v in _m(selector, "matchLabels").items()
    ]
    for expr in _l(selector, "matchExpressions"):
        key, op = str(expr.get("key", "")), expr.get("operator", "")
        values = ",".join(sorted(str(v) for v in _l(expr, "values")))
        if op == "In":
            parts.append((key, f"{key} in ({values})"))
        elif op == "NotIn":
            parts.append((key, f"{key} notin ({values})"))
        elif op == "Exists":
            parts.append((key, key))
        elif op == "DoesNotExist":
            parts.append((key, f"!{key}"))
    return ",".join(text for _, text in sorted(parts, key=lambda p: p[0]))


def _format_selector(selector: Any) -> str:
    """``metav1.FormatLabelSelector``: like :func:`_selector`, ``<none>`` when empty."""
    return _selector(selector) or "<none>"


def _format_labels(labels: Any) -> str:
    """``labels.FormatLabels``: sorted ``k=v`` pairs, ``<none>`` when empty."""
    if not isinstance(labels, Mapping) or not labels:
        return "<none>"
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def _containers(template_spec: Obj) -> tuple[str, str]:
    """kube's ``layoutContainerCells``: container names and images, comma-separated."""
    containers = _l(template_spec, "containers")
    names = ",".join(str(c.get("name", "")) for c in containers)
    images = ",".join(str(c.get("image", "")) for c in containers)
    return names, images


def _template_spec(obj: Obj) -> Obj:
    return _m(_m(_m(obj, "spec"), "template"), "spec")


def _condition_true(conditions: list[Any], kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True" for c in conditions)


# -- pods -------------------------------------------------------------------------------------


def _restartable_init(container: Any) -> bool:
    return isinstance(container, Mapping) and container.get("restartPolicy") == "Always"


def _terminated_reason(terminated: Obj, prefix: str = "") -> str:
    if terminated.get("reason"):
        return f"{prefix}{terminated['reason']}"
    if _int(terminated.get("signal")):
        return f"{prefix}Signal:{terminated['signal']}"
    return f"{prefix}ExitCode:{_int(terminated.get('exitCode'))}"


def pod_status(pod: Obj, now: datetime | None = None) -> tuple[str, str, str]:
    """(READY, STATUS, RESTARTS) as kubectl's ``printPod`` computes them: the phase, or the
    pod's reason, or the init or app containers' waiting/terminated reasons (so a finished
    pod shows ``Completed`` or ``Error``), or ``Terminating``. ``now`` (default: the system
    clock) dates the last restart."""
    spec, status = _m(pod, "spec"), _m(pod, "status")
    phase = str(status.get("phase") or "")
    reason = str(status.get("reason") or phase)
    conditions = _l(status, "conditions")
    if any(
        c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated" for c in conditions
    ):
        reason = "SchedulingGated"
    init_specs = {c.get("name"): c for c in _l(spec, "initContainers")}
    total = len(_l(spec, "containers")) + sum(
        1 for c in init_specs.values() if _restartable_init(c)
    )
    ready = restarts = sidecar_restarts = 0
    last_restart: datetime | None = None
    last_sidecar_restart: datetime | None = None

    def later(current: datetime | None, container: Obj) -> datetime | None:
        finished = _time(_m(_m(container, "lastState"), "terminated").get("finishedAt"))
        if finished is not None and (current is None or finished > current):
            return finished
        return current

    initializing = False
    init_statuses = _l(status, "initContainerStatuses")
    for index, container in enumerate(init_statuses):
        restarts += _int(container.get("restartCount"))
        last_restart = later(last_restart, container)
        sidecar = _restartable_init(init_specs.get(container.get("name")))
        if sidecar:
            sidecar_restarts += _int(container.get("restartCount"))
            last_sidecar_restart = later(last_sidecar_restart, container)
        state = _m(container, "state")
        terminated, waiting = _m(state, "terminated"), _m(state, "waiting")
        if "terminated" in state and _int(terminated.get("exitCode")) == 0:
            continue
        if sidecar and container.get("started"):
            if container.get("ready"):
                ready += 1
            continue
        if "terminated" in state:
            reason = _terminated_reason(terminated, "Init:")
        elif waiting.get("reason") and waiting.get("reason") != "PodInitializing":
            reason = f"Init:{waiting['reason']}"
        else:
            reason = f"Init:{index}/{len(init_specs)}"
        initializing = True
        break
    if not initializing or _condition_true(conditions, "Initialized"):
        restarts, last_restart = sidecar_restarts, last_sidecar_restart
        has_running = False
        for container in reversed(_l(status, "containerStatuses")):
            restarts += _int(container.get("restartCount"))
            last_restart = later(last_restart, container)
            state = _m(container, "state")
            terminated, waiting = _m(state, "terminated"), _m(state, "waiting")
            if waiting.get("reason"):
                reason = str(waiting["reason"])
            elif "terminated" in state:
                reason = _terminated_reason(terminated)
            elif container.get("ready") and "running" in state:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if _condition_true(conditions, "Ready") else "NotReady"
    deleting = bool(_m(pod, "metadata").get("deletionTimestamp"))
    if deleting and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif deleting and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"
    restarts_text = str(restarts)
    if restarts and last_restart is not None:
        ago = human_duration(((now or datetime.now(UTC)) - last_restart).total_seconds())
        restarts_text = f"{restarts} ({ago} ago)"
    return f"{ready}/{total}", reason, restarts_text


def _pod(obj: Obj, now: datetime) -> list[Any]:
    ready, reason, restarts = pod_status(obj, now)
    spec, status = _m(obj, "spec"), _m(obj, "status")
    ips = _l(status, "podIPs")
    ip = (ips[0].get("ip") if ips else None) or "<none>"
    gates = _l(spec, "readinessGates")
    if gates:
        conditions = _l(status, "conditions")
        met = 0
        for gate in gates:
            for condition in conditions:
                if condition.get("type") == gate.get("conditionType"):
                    met += condition.get("status") == "True"
                    break
        gates_text = f"{met}/{len(gates)}"
    else:
        gates_text = "<none>"
    return [
        ready,
        reason,
        restarts,
        _age(obj, now),
        ip,
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        gates_text,
    ]


# -- other kinds -------------------------------------------------------------------------------


_ROLE_PREFIX = "node-role.kubernetes.io/"


def _node(obj: Obj, now: datetime) -> list[Any]:
    status, info = _m(obj, "status"), _m(_m(obj, "status"), "nodeInfo")
    ready = next((c for c in _l(status, "conditions") if c.get("type") == "Ready"), None)
    states = [] if ready is None else ["Ready" if ready.get("status") == "True" else "NotReady"]
    states = states or ["Unknown"]
    if _m(obj, "spec").get("unschedulable"):
        states.append("SchedulingDisabled")
    roles: set[str] = set()
    for key, value in _m(_m(obj, "metadata"), "labels").items():
        role = key.removeprefix(_ROLE_PREFIX)
        if key.startswith(_ROLE_PREFIX) and role:
            roles.add(role)
        elif key == "kubernetes.io/role" and value:
            roles.add(str(value))

    def address(kind: str) -> str:
        for entry in _l(status, "addresses"):
            if entry.get("type") == kind:
                return str(entry.get("address") or "<none>")
        return "<none>"

    return [
        ",".join(states),
        ",".join(sorted(roles)) or "<none>",
        _age(obj, now),
        info.get("kubeletVersion") or "",
        address("InternalIP"),
        address("ExternalIP"),
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


def _deployment(obj: Obj, now: datetime) -> list[Any]:
    spec, status = _m(obj, "spec"), _m(obj, "status")
    names, images = _containers(_template_spec(obj))
    return [
        f"{_int(status.get('readyReplicas'))}/{_int(spec.get('replicas'))}",
        _int(status.get("updatedReplicas")),
        _int(status.get("availableReplicas")),
        _age(obj, now),
        names,
        images,
        _selector(spec.get("selector")),
    ]


def _replica_set(obj: Obj, now: datetime) -> list[Any]:
    spec, status = _m(obj, "spec"), _m(obj, "status")
    names, images = _containers(_template_spec(obj))
    return [
        _int(spec.get("replicas")),
        _int(status.get("replicas")),
        _int(status.get("readyReplicas")),
        _age(obj, now),
        names,
        images,
        _format_selector(spec.get("selector")),
    ]


def _replication_controller(obj: Obj, now: datetime) -> list[Any]:
    cells = _replica_set(obj, now)
    cells[-1] = _format_labels(_m(obj, "spec").get("selector"))  # a plain label map
    return cells


def _job(obj: Obj, now: datetime) -> list[Any]:
    meta, spec, status = _m(obj, "metadata"), _m(obj, "spec"), _m(obj, "status")
    succeeded = _int(status.get("succeeded"))
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{_int(spec.get('completions'))}"
    elif _int(spec.get("parallelism")) > 1:
        completions = f"{succeeded}/1 of {_int(spec.get('parallelism'))}"
    else:
        completions = f"{succeeded}/1"
    start, end = _time(status.get("startTime")), _time(status.get("completionTime"))
    duration = "" if start is None else human_duration(((end or now) - start).total_seconds())
    conditions = _l(status, "conditions")
    if _condition_true(conditions, "Complete"):
        state = "Complete"
    elif _condition_true(conditions, "Failed"):
        state = "Failed"
    elif meta.get("deletionTimestamp"):
        state = "Terminating"
    elif _condition_true(conditions, "Suspended"):
        state = "Suspended"
    elif _condition_true(conditions, "FailureTarget"):
        state = "FailureTarget"
    elif _condition_true(conditions, "SuccessCriteriaMet"):
        state = "SuccessCriteriaMet"
    else:
        state = "Running"
    names, images = _containers(_template_spec(obj))
    return [
        state,
        completions,
        duration,
        _age(obj, now),
        names,
        images,
        _format_selector(spec.get("selector")),
    ]


def _cron_job(obj: Obj, now: datetime) -> list[Any]:
    spec, status = _m(obj, "spec"), _m(obj, "status")
    job_spec = _m(_m(spec, "jobTemplate"), "spec")
    suspend = spec.get("suspend")
    last = status.get("lastScheduleTime")
    names, images = _containers(_m(_m(job_spec, "template"), "spec"))
    return [
        spec.get("schedule") or "",
        spec.get("timeZone") or "<none>",
        "<unset>" if suspend is None else str(bool(suspend)),  # kube's printBool
        len(_l(status, "active")),
        _since(last, now) if last else "<none>",
        _age(obj, now),
        names,
        images,
        _format_selector(job_spec.get("selector")),
    ]


def _namespace(obj: Obj, now: datetime) -> list[Any]:
    return [_m(obj, "status").get("phase") or "", _age(obj, now)]


def _config_map(obj: Obj, now: datetime) -> list[Any]:
    return [len(_m(obj, "data")) + len(_m(obj, "binaryData")), _age(obj, now)]


def _lease(obj: Obj, now: datetime) -> list[Any]:
    return [_m(obj, "spec").get("holderIdentity") or "<none>", _age(obj, now)]


@dataclass(frozen=True)
class _Printer:
    columns: tuple[tuple[str, str, int], ...]  # (name, type, priority) after NAME
    cells: Callable[[Obj, datetime], list[Any]]


_AGE = ("Age", "string", 0)
_WORKLOAD_WIDE = (("Containers", "string", 1), ("Images", "string", 1), ("Selector", "string", 1))
_REPLICAS = (("Desired", "integer", 0), ("Current", "integer", 0), ("Ready", "integer", 0), _AGE)

_PRINTERS: dict[tuple[str, str], _Printer] = {
    ("", "pods"): _Printer(
        (
            ("Ready", "string", 0),
            ("Status", "string", 0),
            ("Restarts", "string", 0),
            _AGE,
            ("IP", "string", 1),
            ("Node", "string", 1),
            ("Nominated Node", "string", 1),
            ("Readiness Gates", "string", 1),
        ),
        _pod,
    ),
    ("", "nodes"): _Printer(
        (
            ("Status", "string", 0),
            ("Roles", "string", 0),
            _AGE,
            ("Version", "string", 0),
            ("Internal-IP", "string", 1),
            ("External-IP", "string", 1),
            ("OS-Image", "string", 1),
            ("Kernel-Version", "string", 1),
            ("Container-Runtime", "string", 1),
        ),
        _node,
    ),
    ("apps", "deployments"): _Printer(
        (
            ("Ready", "string", 0),
            ("Up-to-date", "integer", 0),
            ("Available", "integer", 0),
            _AGE,
            *_WORKLOAD_WIDE,
        ),
        _deployment,
    ),
    ("apps", "replicasets"): _Printer((*_REPLICAS, *_WORKLOAD_WIDE), _replica_set),
    ("", "replicationcontrollers"): _Printer(
        (*_REPLICAS, *_WORKLOAD_WIDE), _replication_controller
    ),
    ("batch", "jobs"): _Printer(
        (
            ("Status", "string", 0),
            ("Completions", "string", 0),
            ("Duration", "string", 0),
            _AGE,
            *_WORKLOAD_WIDE,
        ),
        _job,
    ),
    ("batch", "cronjobs"): _Printer(
        (
            ("Schedule", "string", 0),
            ("Timezone", "string", 0),
            ("Suspend", "boolean", 0),
            ("Active", "integer", 0),
            ("Last Schedule", "string", 0),
            _AGE,
            *_WORKLOAD_WIDE,
        ),
        _cron_job,
    ),
    ("", "namespaces"): _Printer((("Status", "string", 0), _AGE), _namespace),
    ("", "configmaps"): _Printer((("Data", "integer", 0), _AGE), _config_map),
    ("coordination.k8s.io", "leases"): _Printer((("Holder", "string", 0), _AGE), _lease),
}

_DEFAULT = _Printer((_AGE,), lambda obj, now: [_age(obj, now)])


_NAME_DESCRIPTION = (
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated. More info: "
    "http://kubernetes.io/docs/user-guide/identifiers#names"
)
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
        return _since(value, now) if _time(value) is not None else "<invalid>"
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
    if res.crd is not None:
        printer = _crd_printer(res.crd)
    else:
        printer = _PRINTERS.get((res.group, res.plural), _DEFAULT)
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
            "priority": priority,
        }
        for name, typ, priority in printer.columns
    ]
    if res.crd is not None:
        definitions = _crd_definitions(res.crd)
    rows = []
    for obj in listed.get("items") or []:
        meta = obj.get("metadata") or {}
        row: dict[str, Any] = {"cells": [meta.get("name", ""), *printer.cells(obj, now)]}
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
