"""Pods: kubectl's READY, STATUS and RESTARTS logic (``printPod``) and the pod columns."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from ._format import Obj, age, as_int, human_duration, items, mapping, parse_time
from ._printer import Printer

__all__ = ["PRINTERS", "pod_status"]


def _condition_true(conditions: list[Any], kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True" for c in conditions)


def _restartable_init(container: Any) -> bool:
    return isinstance(container, Mapping) and container.get("restartPolicy") == "Always"


def _terminated_reason(terminated: Obj, prefix: str = "") -> str:
    if terminated.get("reason"):
        return f"{prefix}{terminated['reason']}"
    if as_int(terminated.get("signal")):
        return f"{prefix}Signal:{terminated['signal']}"
    return f"{prefix}ExitCode:{as_int(terminated.get('exitCode'))}"


def pod_status(pod: Obj, now: datetime | None = None) -> tuple[str, str, str]:
    """(READY, STATUS, RESTARTS) as kubectl's ``printPod`` computes them: the phase, or the
    pod's reason, or the init or app containers' waiting/terminated reasons (so a finished
    pod shows ``Completed`` or ``Error``), or ``Terminating``. ``now`` (default: the system
    clock) dates the last restart."""
    spec, status = mapping(pod, "spec"), mapping(pod, "status")
    phase = str(status.get("phase") or "")
    reason = str(status.get("reason") or phase)
    conditions = items(status, "conditions")
    if any(
        c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated" for c in conditions
    ):
        reason = "SchedulingGated"
    init_specs = {c.get("name"): c for c in items(spec, "initContainers")}
    total = len(items(spec, "containers")) + sum(
        1 for c in init_specs.values() if _restartable_init(c)
    )
    ready = restarts = sidecar_restarts = 0
    last_restart: datetime | None = None
    last_sidecar_restart: datetime | None = None

    def later(current: datetime | None, container: Obj) -> datetime | None:
        finished = parse_time(
            mapping(mapping(container, "lastState"), "terminated").get("finishedAt")
        )
        if finished is not None and (current is None or finished > current):
            return finished
        return current

    initializing = False
    init_statuses = items(status, "initContainerStatuses")
    for index, container in enumerate(init_statuses):
        restarts += as_int(container.get("restartCount"))
        last_restart = later(last_restart, container)
        sidecar = _restartable_init(init_specs.get(container.get("name")))
        if sidecar:
            sidecar_restarts += as_int(container.get("restartCount"))
            last_sidecar_restart = later(last_sidecar_restart, container)
        state = mapping(container, "state")
        terminated, waiting = mapping(state, "terminated"), mapping(state, "waiting")
        if "terminated" in state and as_int(terminated.get("exitCode")) == 0:
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
        for container in reversed(items(status, "containerStatuses")):
            restarts += as_int(container.get("restartCount"))
            last_restart = later(last_restart, container)
            state = mapping(container, "state")
            terminated, waiting = mapping(state, "terminated"), mapping(state, "waiting")
            if waiting.get("reason"):
                reason = str(waiting["reason"])
            elif "terminated" in state:
                reason = _terminated_reason(terminated)
            elif container.get("ready") and "running" in state:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if _condition_true(conditions, "Ready") else "NotReady"
    deleting = bool(mapping(pod, "metadata").get("deletionTimestamp"))
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
    spec, status = mapping(obj, "spec"), mapping(obj, "status")
    ips = items(status, "podIPs")
    ip = (ips[0].get("ip") if ips else None) or "<none>"
    gates = items(spec, "readinessGates")
    if gates:
        conditions = items(status, "conditions")
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
        age(obj, now),
        ip,
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        gates_text,
    ]


PRINTERS = {
    ("", "pods"): Printer(
        (
            ("Ready", "string", 0),
            ("Status", "string", 0),
            ("Restarts", "string", 0),
            ("Age", "string", 0),
            ("IP", "string", 1),
            ("Node", "string", 1),
            ("Nominated Node", "string", 1),
            ("Readiness Gates", "string", 1),
        ),
        _pod,
    ),
}
