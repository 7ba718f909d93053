"""The core group's other kinds: nodes, namespaces, config maps, secrets, service accounts,
services, endpoints, events, persistent volumes and claims, resource quotas and component
statuses (kube 1.24's ``printers.go``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ._format import (
    Obj,
    age,
    as_int,
    format_labels,
    items,
    load_balancer,
    mapping,
    parse_time,
    since,
)
from ._printer import Column, Printer

__all__ = ["PRINTERS", "event_cells"]

_AGE: Column = ("Age", "string", 0)
_ROLE_PREFIX = "node-role.kubernetes.io/"
_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"


def _node(obj: Obj, now: datetime) -> list[Any]:
    status, info = mapping(obj, "status"), mapping(mapping(obj, "status"), "nodeInfo")
    ready = None
    for condition in items(status, "conditions"):
        if condition.get("type") == "Ready":
            ready = condition  # the last one wins, as kube's condition map
    states = [] if ready is None else ["Ready" if ready.get("status") == "True" else "NotReady"]
    states = states or ["Unknown"]
    if mapping(obj, "spec").get("unschedulable"):
        states.append("SchedulingDisabled")
    roles: set[str] = set()
    for key, value in mapping(mapping(obj, "metadata"), "labels").items():
        role = key.removeprefix(_ROLE_PREFIX)
        if key.startswith(_ROLE_PREFIX) and role:
            roles.add(role)
        elif key == "kubernetes.io/role" and value:
            roles.add(str(value))

    def address(kind: str) -> str:
        for entry in items(status, "addresses"):
            if entry.get("type") == kind:
                return str(entry.get("address") or "")
        return "<none>"

    return [
        ",".join(states),
        ",".join(sorted(roles)) or "<none>",
        age(obj, now),
        info.get("kubeletVersion") or "",
        address("InternalIP"),
        address("ExternalIP"),
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


def _namespace(obj: Obj, now: datetime) -> list[Any]:
    return [mapping(obj, "status").get("phase") or "", age(obj, now)]


def _config_map(obj: Obj, now: datetime) -> list[Any]:
    return [len(mapping(obj, "data")) + len(mapping(obj, "binaryData")), age(obj, now)]


def _secret(obj: Obj, now: datetime) -> list[Any]:
    return [obj.get("type") or "", len(mapping(obj, "data")), age(obj, now)]


def _service_account(obj: Obj, now: datetime) -> list[Any]:
    return [len(items(obj, "secrets")), age(obj, now)]


def _external_ip(obj: Obj) -> str:
    """kube's ``getServiceExternalIP``."""
    spec = mapping(obj, "spec")
    external = [str(ip) for ip in items(spec, "externalIPs")]
    kind = spec.get("type")
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) or "<none>"
    if kind == "LoadBalancer":
        balancer = load_balancer(mapping(obj, "status"))
        if external:
            return ",".join([*balancer.split(","), *external] if balancer else external)
        return balancer or "<pending>"
    if kind == "ExternalName":
        return str(spec.get("externalName") or "")
    return "<unknown>"


def _ports(ports: list[Any]) -> str:
    """kube's ``makePortString``: ``80/TCP``, ``80:30080/TCP``."""
    pieces = []
    for port in ports:
        protocol = port.get("protocol") or ""
        if as_int(port.get("nodePort")) > 0:
            pieces.append(f"{as_int(port.get('port'))}:{port['nodePort']}/{protocol}")
        else:
            pieces.append(f"{as_int(port.get('port'))}/{protocol}")
    return ",".join(pieces)


def _service(obj: Obj, now: datetime) -> list[Any]:
    spec = mapping(obj, "spec")
    cluster_ips = items(spec, "clusterIPs")
    cluster_ip = str(cluster_ips[0]) if cluster_ips else "<none>"
    return [
        spec.get("type") or "",
        cluster_ip,
        _external_ip(obj),
        _ports(items(spec, "ports")) or "<none>",
        age(obj, now),
        format_labels(spec.get("selector")),
    ]


def _join_host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _endpoints(obj: Obj, now: datetime) -> list[Any]:
    """kube's ``formatEndpoints``: up to three ``ip:port`` (``ip`` without ports)."""
    subsets = items(obj, "subsets")
    if not subsets:
        return ["<none>", age(obj, now)]
    shown: list[str] = []
    for subset in subsets:
        addresses = [str(a.get("ip", "")) for a in items(subset, "addresses")]
        ports = items(subset, "ports")
        if not ports:
            shown.extend(addresses)
        for port in ports:
            shown.extend(_join_host_port(ip, as_int(port.get("port"))) for ip in addresses)
    text = ",".join(shown[:3])
    if len(shown) > 3:
        text = f"{text} + {len(shown) - 3} more..."
    return [text, age(obj, now)]


def event_cells(event: Obj, now: datetime) -> list[Any]:
    """kube's ``printEvent`` of a core/v1 Event (wide: every column; NAME last)."""
    first = since(event.get("firstTimestamp"), now)
    if parse_time(event.get("firstTimestamp")) is None:
        first = since(event.get("eventTime"), now)
    last = first
    if parse_time(event.get("lastTimestamp")) is not None:
        last = since(event.get("lastTimestamp"), now)
    count = as_int(event.get("count"))
    series = event.get("series")
    if isinstance(series, dict):
        last = since(series.get("lastObservedTime"), now)
        count = as_int(series.get("count"))
    elif count == 0:
        count = 1  # singleton events of the new API have no count
    involved = mapping(event, "involvedObject")
    kind = str(involved.get("kind") or "").lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    source = mapping(event, "source")
    component = source.get("component") or event.get("reportingComponent") or ""
    host = source.get("host") or event.get("reportingInstance") or ""
    return [
        last,
        event.get("type") or "",
        event.get("reason") or "",
        target,
        involved.get("fieldPath") or "",
        f"{component}, {host}" if host else component,
        str(event.get("message") or "").strip(),
        first,
        count,
    ]


def _events_v1(obj: Obj, now: datetime) -> list[Any]:
    """An events.k8s.io/v1 Event, printed as the core Event kube converts it to."""
    core = {
        "firstTimestamp": obj.get("deprecatedFirstTimestamp"),
        "lastTimestamp": obj.get("deprecatedLastTimestamp"),
        "eventTime": obj.get("eventTime"),
        "count": obj.get("deprecatedCount"),
        "involvedObject": obj.get("regarding"),
        "source": obj.get("deprecatedSource"),
        "reportingComponent": obj.get("reportingController"),
        "reportingInstance": obj.get("reportingInstance"),
        "type": obj.get("type"),
        "reason": obj.get("reason"),
        "message": obj.get("note"),
        "series": obj.get("series"),
    }
    return event_cells(core, now)


_EVENT_COLUMNS: tuple[Column, ...] = (
    ("Last Seen", "string", 0),
    ("Type", "string", 0),
    ("Reason", "string", 0),
    ("Object", "string", 0),
    ("Subobject", "string", 1),
    ("Source", "string", 1),
    ("Message", "string", 0),
    ("First Seen", "string", 1),
    ("Count", "string", 1),
)
_NAME_LAST = len(_EVENT_COLUMNS)
"""An event's NAME is its last column, and a wide one."""


def _access_modes(modes: list[Any]) -> str:
    """kube's ``GetAccessModesAsString``: RWO, ROX, RWX, RWOP in that order."""
    short = {
        "ReadWriteOnce": "RWO",
        "ReadOnlyMany": "ROX",
        "ReadWriteMany": "RWX",
        "ReadWriteOncePod": "RWOP",
    }
    return ",".join(abbr for mode, abbr in short.items() if mode in modes)


def _storage_class(obj: Obj, field: Any) -> str:
    """The beta storage-class annotation, else the spec's ``storageClassName``."""
    annotations = mapping(mapping(obj, "metadata"), "annotations")
    if _BETA_STORAGE_CLASS in annotations:
        return str(annotations[_BETA_STORAGE_CLASS])
    return str(field or "")


def _phase(obj: Obj) -> str:
    if mapping(obj, "metadata").get("deletionTimestamp"):
        return "Terminating"
    return str(mapping(obj, "status").get("phase") or "")


def _persistent_volume(obj: Obj, now: datetime) -> list[Any]:
    spec, status = mapping(obj, "spec"), mapping(obj, "status")
    claim = mapping(spec, "claimRef")
    claim_text = f"{claim.get('namespace', '')}/{claim.get('name', '')}" if claim else ""
    return [
        str(mapping(spec, "capacity").get("storage") or "0"),
        _access_modes(items(spec, "accessModes")),
        spec.get("persistentVolumeReclaimPolicy") or "",
        _phase(obj),
        claim_text,
        _storage_class(obj, spec.get("storageClassName")),
        status.get("reason") or "",
        age(obj, now),
        spec.get("volumeMode") or "<unset>",
    ]


def _persistent_volume_claim(obj: Obj, now: datetime) -> list[Any]:
    spec, status = mapping(obj, "spec"), mapping(obj, "status")
    capacity = modes = ""
    if spec.get("volumeName"):
        modes = _access_modes(items(status, "accessModes"))
        capacity = str(mapping(status, "capacity").get("storage") or "0")
    return [
        _phase(obj),
        spec.get("volumeName") or "",
        capacity,
        modes,
        _storage_class(obj, spec.get("storageClassName")),
        age(obj, now),
        spec.get("volumeMode") or "<unset>",
    ]


def _resource_quota(obj: Obj, now: datetime) -> list[Any]:
    """REQUEST and LIMIT: ``name: used/hard`` of each resource in ``status.hard``, sorted
    (``limits.*`` under LIMIT)."""
    status = mapping(obj, "status")
    hard, used = mapping(status, "hard"), mapping(status, "used")
    requests: list[str] = []
    limits: list[str] = []
    for resource in sorted(hard):
        entry = f"{resource}: {used.get(resource, '0')}/{hard[resource]}"
        pieces = resource.split(".")
        (limits if len(pieces) > 1 and pieces[0] == "limits" else requests).append(entry)
    return [age(obj, now), ", ".join(requests), ", ".join(limits)]


def _component_status(obj: Obj, now: datetime) -> list[Any]:
    for condition in items(obj, "conditions"):
        if condition.get("type") == "Healthy":
            healthy = "Healthy" if condition.get("status") == "True" else "Unhealthy"
            return [healthy, condition.get("message") or "", condition.get("error") or ""]
    return ["Unknown", "", ""]


PRINTERS = {
    ("", "nodes"): Printer(
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
    ("", "namespaces"): Printer((("Status", "string", 0), _AGE), _namespace),
    ("", "configmaps"): Printer((("Data", "string", 0), _AGE), _config_map),
    ("", "secrets"): Printer((("Type", "string", 0), ("Data", "string", 0), _AGE), _secret),
    ("", "serviceaccounts"): Printer((("Secrets", "string", 0), _AGE), _service_account),
    ("", "services"): Printer(
        (
            ("Type", "string", 0),
            ("Cluster-IP", "string", 0),
            ("External-IP", "string", 0),
            ("Port(s)", "string", 0),
            _AGE,
            ("Selector", "string", 1),
        ),
        _service,
    ),
    ("", "endpoints"): Printer((("Endpoints", "string", 0), _AGE), _endpoints),
    ("", "events"): Printer(_EVENT_COLUMNS, event_cells, name_at=_NAME_LAST),
    ("events.k8s.io", "events"): Printer(_EVENT_COLUMNS, _events_v1, name_at=_NAME_LAST),
    ("", "persistentvolumes"): Printer(
        (
            ("Capacity", "string", 0),
            ("Access Modes", "string", 0),
            ("Reclaim Policy", "string", 0),
            ("Status", "string", 0),
            ("Claim", "string", 0),
            ("StorageClass", "string", 0),
            ("Reason", "string", 0),
            _AGE,
            ("VolumeMode", "string", 1),
        ),
        _persistent_volume,
    ),
    ("", "persistentvolumeclaims"): Printer(
        (
            ("Status", "string", 0),
            ("Volume", "string", 0),
            ("Capacity", "string", 0),
            ("Access Modes", "string", 0),
            ("StorageClass", "string", 0),
            _AGE,
            ("VolumeMode", "string", 1),
        ),
        _persistent_volume_claim,
    ),
    ("", "resourcequotas"): Printer(
        (_AGE, ("Request", "string", 0), ("Limit", "string", 0)), _resource_quota
    ),
    ("", "componentstatuses"): Printer(
        (("Status", "string", 0), ("Message", "string", 0), ("Error", "string", 0)),
        _component_status,
    ),
}
