"""The other groups' kinds: networking, RBAC bindings, certificates, leases, storage,
scheduling, node, admission webhooks, flow control, storage versions, endpoint slices and
API services (kube 1.24's ``printers.go`` and kube-aggregator's APIService table)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ._format import (
    Obj,
    age,
    as_int,
    format_selector,
    human_duration,
    items,
    list_with_more,
    load_balancer,
    mapping,
)
from ._printer import Column, Printer

__all__ = ["PRINTERS"]

_AGE: Column = ("Age", "string", 0)
_DEFAULT_CLASS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)


def _ingress(obj: Obj, now: datetime) -> list[Any]:
    spec = mapping(obj, "spec")
    rules = items(spec, "rules")
    hosts = [str(r["host"]) for r in rules[:3] if r.get("host")]
    shown = ",".join(hosts) or "*"
    if len(rules) > 3:
        shown = f"{shown} + {len(rules) - 3} more..."
    return [
        spec.get("ingressClassName") or "<none>",
        shown,
        load_balancer(mapping(obj, "status")),
        "80, 443" if items(spec, "tls") else "80",
        age(obj, now),
    ]


def _ingress_class(obj: Obj, now: datetime) -> list[Any]:
    spec = mapping(obj, "spec")
    params = spec.get("parameters")
    shown = "<none>"
    if isinstance(params, dict):
        kind = str(params.get("kind", ""))
        if params.get("apiGroup") is not None:
            kind = f"{kind}.{params['apiGroup']}"
        shown = f"{kind}/{params.get('name', '')}"
    return [spec.get("controller") or "", shown, age(obj, now)]


def _network_policy(obj: Obj, now: datetime) -> list[Any]:
    return [format_selector(mapping(mapping(obj, "spec"), "podSelector")), age(obj, now)]


def _binding(obj: Obj, now: datetime) -> list[Any]:
    """kube's ``printRoleBinding``: the role, then users, groups and service accounts."""
    ref = mapping(obj, "roleRef")
    users, groups, accounts = [], [], []
    for subject in items(obj, "subjects"):
        kind, name = subject.get("kind"), str(subject.get("name", ""))
        if kind == "ServiceAccount":
            accounts.append(f"{subject.get('namespace', '')}/{name}")
        elif kind == "User":
            users.append(name)
        elif kind == "Group":
            groups.append(name)
    return [
        f"{ref.get('kind', '')}/{ref.get('name', '')}",
        age(obj, now),
        ", ".join(users),
        ", ".join(groups),
        ", ".join(accounts),
    ]


def _csr_condition(obj: Obj) -> str:
    """kube's ``extractCSRStatus``: Denied, Approved or Pending, then Failed and Issued."""
    kinds = {c.get("type") for c in items(mapping(obj, "status"), "conditions")}
    status = "Denied" if "Denied" in kinds else "Approved" if "Approved" in kinds else "Pending"
    if "Failed" in kinds:
        status += ",Failed"
    if mapping(obj, "status").get("certificate"):
        status += ",Issued"
    return status


def _certificate_signing_request(obj: Obj, now: datetime) -> list[Any]:
    spec = mapping(obj, "spec")
    seconds = spec.get("expirationSeconds")
    return [
        age(obj, now),
        spec.get("signerName") or "<none>",
        spec.get("username") or "",
        "<none>" if seconds is None else human_duration(as_int(seconds)),
        _csr_condition(obj),
    ]


def _lease(obj: Obj, now: datetime) -> list[Any]:
    return [mapping(obj, "spec").get("holderIdentity") or "", age(obj, now)]


def _storage_class_name(obj: Obj) -> str:
    meta = mapping(obj, "metadata")
    annotations = mapping(meta, "annotations")
    default = any(annotations.get(key) == "true" for key in _DEFAULT_CLASS)
    return f"{meta.get('name', '')} (default)" if default else str(meta.get("name", ""))


def _storage_class(obj: Obj, now: datetime) -> list[Any]:
    return [
        obj.get("provisioner") or "",
        obj.get("reclaimPolicy") or "Delete",
        obj.get("volumeBindingMode") or "Immediate",
        bool(obj.get("allowVolumeExpansion")),
        age(obj, now),
    ]


def _volume_attachment(obj: Obj, now: datetime) -> list[Any]:
    spec = mapping(obj, "spec")
    return [
        spec.get("attacher") or "",
        mapping(spec, "source").get("persistentVolumeName") or "",
        spec.get("nodeName") or "",
        bool(mapping(obj, "status").get("attached")),
        age(obj, now),
    ]


def _csi_node(obj: Obj, now: datetime) -> list[Any]:
    return [len(items(mapping(obj, "spec"), "drivers")), age(obj, now)]


def _csi_driver(obj: Obj, now: datetime) -> list[Any]:
    spec = mapping(obj, "spec")
    requests = spec.get("tokenRequests")
    audiences = (
        "<unset>"
        if requests is None
        else ",".join(str(r.get("audience", "")) for r in requests if isinstance(r, dict))
    )
    attach = spec.get("attachRequired")
    return [
        True if attach is None else bool(attach),
        bool(spec.get("podInfoOnMount")),
        bool(spec.get("storageCapacity")),
        audiences,
        bool(spec.get("requiresRepublish")),
        ",".join(str(m) for m in items(spec, "volumeLifecycleModes")) or "<none>",
        age(obj, now),
    ]


def _csi_storage_capacity(obj: Obj, now: datetime) -> list[Any]:
    capacity = obj.get("capacity")
    return [obj.get("storageClassName") or "", "<unset>" if capacity is None else str(capacity)]


def _priority_class(obj: Obj, now: datetime) -> list[Any]:
    return [as_int(obj.get("value")), bool(obj.get("globalDefault")), age(obj, now)]


def _runtime_class(obj: Obj, now: datetime) -> list[Any]:
    return [obj.get("handler") or "", age(obj, now)]


def _webhooks(obj: Obj, now: datetime) -> list[Any]:
    return [len(items(obj, "webhooks")), age(obj, now)]


def _flow_schema(obj: Obj, now: datetime) -> list[Any]:
    spec = mapping(obj, "spec")
    method = mapping(spec, "distinguisherMethod").get("type") or "<none>"
    dangling = next(
        (
            str(c.get("status", ""))
            for c in items(mapping(obj, "status"), "conditions")
            if c.get("type") == "Dangling"
        ),
        "?",
    )
    return [
        mapping(spec, "priorityLevelConfiguration").get("name") or "",
        as_int(spec.get("matchingPrecedence")),
        method,
        age(obj, now),
        dangling,
    ]


def _priority_level(obj: Obj, now: datetime) -> list[Any]:
    spec = mapping(obj, "spec")
    limited = spec.get("limited")
    shares: Any = "<none>"
    queues: Any = "<none>"
    hand: Any = "<none>"
    length: Any = "<none>"
    if isinstance(limited, dict):
        shares = as_int(
            limited.get("assuredConcurrencyShares", limited.get("nominalConcurrencyShares"))
        )
        queuing = mapping(mapping(limited, "limitResponse"), "queuing")
        if queuing:
            queues = as_int(queuing.get("queues"))
            hand = as_int(queuing.get("handSize"))
            length = as_int(queuing.get("queueLengthLimit"))
    return [spec.get("type") or "", shares, queues, hand, length, age(obj, now)]


def _storage_version(obj: Obj, now: datetime) -> list[Any]:
    status = mapping(obj, "status")
    versions = [
        f"{v.get('apiServerID', '')}={v.get('encodingVersion', '')}"
        for v in items(status, "storageVersions")
    ]
    common = status.get("commonEncodingVersion")
    return [
        "<unset>" if common is None else common,
        list_with_more(versions, len(versions)),
        age(obj, now),
    ]


def _endpoint_slice(obj: Obj, now: datetime) -> list[Any]:
    ports = []
    for port in items(obj, "ports"):
        if port.get("port") is not None:
            ports.append(str(port["port"]))
        elif port.get("name") is not None:
            ports.append(str(port["name"]))
        else:
            ports.append("*")
    addresses = [str(a) for e in items(obj, "endpoints") for a in items(e, "addresses")]
    return [
        obj.get("addressType") or "",
        list_with_more(ports, len(ports)),
        list_with_more(addresses, len(addresses)),
        age(obj, now),
    ]


def _api_service(obj: Obj, now: datetime) -> list[Any]:
    """kube-aggregator's table: the backing service (``Local``) and Available."""
    service = mapping(obj, "spec").get("service")
    where = "Local"
    if isinstance(service, dict):
        where = f"{service.get('namespace', '')}/{service.get('name', '')}"
    available = "Unknown"
    for condition in items(mapping(obj, "status"), "conditions"):
        if condition.get("type") == "Available":
            status, reason = str(condition.get("status", "")), condition.get("reason")
            available = f"{status} ({reason})" if status != "True" and reason else status
            break
    return [where, available, age(obj, now)]


_BINDING_COLUMNS: tuple[Column, ...] = (
    ("Role", "string", 0),
    _AGE,
    ("Users", "string", 1),
    ("Groups", "string", 1),
    ("ServiceAccounts", "string", 1),
)
_WEBHOOK_COLUMNS: tuple[Column, ...] = (("Webhooks", "integer", 0), _AGE)

PRINTERS = {
    ("networking.k8s.io", "ingresses"): Printer(
        (
            ("Class", "string", 0),
            ("Hosts", "string", 0),
            ("Address", "string", 0),
            ("Ports", "string", 0),
            _AGE,
        ),
        _ingress,
    ),
    ("networking.k8s.io", "ingressclasses"): Printer(
        (("Controller", "string", 0), ("Parameters", "string", 0), _AGE), _ingress_class
    ),
    ("networking.k8s.io", "networkpolicies"): Printer(
        (("Pod-Selector", "string", 0), _AGE), _network_policy
    ),
    ("rbac.authorization.k8s.io", "rolebindings"): Printer(_BINDING_COLUMNS, _binding),
    ("rbac.authorization.k8s.io", "clusterrolebindings"): Printer(_BINDING_COLUMNS, _binding),
    ("certificates.k8s.io", "certificatesigningrequests"): Printer(
        (
            _AGE,
            ("SignerName", "string", 0),
            ("Requestor", "string", 0),
            ("RequestedDuration", "string", 0),
            ("Condition", "string", 0),
        ),
        _certificate_signing_request,
    ),
    ("coordination.k8s.io", "leases"): Printer((("Holder", "string", 0), _AGE), _lease),
    ("storage.k8s.io", "storageclasses"): Printer(
        (
            ("Provisioner", "string", 0),
            ("ReclaimPolicy", "string", 0),
            ("VolumeBindingMode", "string", 0),
            ("AllowVolumeExpansion", "string", 0),
            _AGE,
        ),
        _storage_class,
        display_name=_storage_class_name,
    ),
    ("storage.k8s.io", "volumeattachments"): Printer(
        (
            ("Attacher", "string", 0),
            ("PV", "string", 0),
            ("Node", "string", 0),
            ("Attached", "boolean", 0),
            _AGE,
        ),
        _volume_attachment,
    ),
    ("storage.k8s.io", "csinodes"): Printer((("Drivers", "integer", 0), _AGE), _csi_node),
    ("storage.k8s.io", "csidrivers"): Printer(
        (
            ("AttachRequired", "boolean", 0),
            ("PodInfoOnMount", "boolean", 0),
            ("StorageCapacity", "boolean", 0),
            ("TokenRequests", "string", 0),
            ("RequiresRepublish", "boolean", 0),
            ("Modes", "string", 0),
            _AGE,
        ),
        _csi_driver,
    ),
    ("storage.k8s.io", "csistoragecapacities"): Printer(
        (("StorageClassName", "string", 0), ("Capacity", "string", 0)), _csi_storage_capacity
    ),
    ("scheduling.k8s.io", "priorityclasses"): Printer(
        (("Value", "integer", 0), ("Global-Default", "boolean", 0), _AGE), _priority_class
    ),
    ("node.k8s.io", "runtimeclasses"): Printer((("Handler", "string", 0), _AGE), _runtime_class),
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): Printer(
        _WEBHOOK_COLUMNS, _webhooks
    ),
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): Printer(
        _WEBHOOK_COLUMNS, _webhooks
    ),
    ("flowcontrol.apiserver.k8s.io", "flowschemas"): Printer(
        (
            ("PriorityLevel", "string", 0),
            ("MatchingPrecedence", "string", 0),
            ("DistinguisherMethod", "string", 0),
            _AGE,
            ("MissingPL", "string", 0),
        ),
        _flow_schema,
    ),
    ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"): Printer(
        (
            ("Type", "string", 0),
            ("AssuredConcurrencyShares", "string", 0),
            ("Queues", "string", 0),
            ("HandSize", "string", 0),
            ("QueueLengthLimit", "string", 0),
            _AGE,
        ),
        _priority_level,
    ),
    ("internal.apiserver.k8s.io", "storageversions"): Printer(
        (("CommonEncodingVersion", "string", 0), ("StorageVersions", "string", 0), _AGE),
        _storage_version,
    ),
    ("discovery.k8s.io", "endpointslices"): Printer(
        (
            ("AddressType", "string", 0),
            ("Ports", "string", 0),
            ("Endpoints", "string", 0),
            _AGE,
        ),
        _endpoint_slice,
    ),
    ("apiregistration.k8s.io", "apiservices"): Printer(
        (("Service", "string", 0), ("Available", "string", 0), _AGE), _api_service
    ),
}
