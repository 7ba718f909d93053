"""What the service controller decides from objects alone (no I/O): which Services want a
balancer, which need cleanup, which updates matter, which nodes may carry traffic."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kcm.cloudprovider import (
    LABEL_NODE_EXCLUDE_BALANCERS,
    LOAD_BALANCER_CLEANUP_FINALIZER,
    TO_BE_DELETED_TAINT,
)
from kcm.models import to_dict
from kcm.models.core_v1 import LoadBalancerStatus, Node, Service, ServiceSpec

__all__ = [
    "has_finalizer",
    "load_balancer_status_equal",
    "needs_cleanup",
    "needs_update",
    "node_eligible",
    "node_ready_status",
    "should_sync_node",
    "wants_load_balancer",
]

Emit = Callable[[str, str], None]
"""``emit(reason, message)``: a Normal event about the new Service."""


def wants_load_balancer(service: Service) -> bool:
    """``type: LoadBalancer`` without a ``loadBalancerClass`` (a class means another
    implementation handles it)."""
    spec = service.spec
    return spec is not None and spec.type == "LoadBalancer" and spec.load_balancer_class is None


def has_finalizer(service: Service) -> bool:
    return LOAD_BALANCER_CLEANUP_FINALIZER in (service.metadata.finalizers or ())


def needs_cleanup(service: Service) -> bool:
    """The Service holds the cleanup finalizer and is being deleted or is no longer of type
    LoadBalancer."""
    if not has_finalizer(service):
        return False
    if service.metadata.deletion_timestamp is not None:
        return True
    return (service.spec.type if service.spec else None) != "LoadBalancer"


def _ports(service: Service) -> list[tuple[object, ...]]:
    return [
        (p.name, p.protocol, p.port, p.node_port, p.target_port)
        for p in ((service.spec.ports if service.spec else None) or ())
    ]


def _go_list(items: Sequence[str] | None) -> str:
    """A string list as Go's ``%v`` prints it: ``[a b]``."""
    return "[" + " ".join(items or ()) + "]"


def needs_update(old: Service, new: Service, emit: Emit) -> bool:
    """Whether a change touches the balancer (the real ``needsUpdate``, events included)."""
    old_wants, new_wants = wants_load_balancer(old), wants_load_balancer(new)
    if not old_wants and not new_wants:
        return False
    o, n = old.spec or ServiceSpec(), new.spec or ServiceSpec()
    if old_wants != new_wants:
        emit("Type", f"{o.type} -> {n.type}")
        return True
    if new_wants and list(o.load_balancer_source_ranges or ()) != list(
        n.load_balancer_source_ranges or ()
    ):
        emit(
            "LoadBalancerSourceRanges",
            f"{_go_list(o.load_balancer_source_ranges)} -> "
            f"{_go_list(n.load_balancer_source_ranges)}",
        )
        return True
    if _ports(old) != _ports(new) or o.session_affinity != n.session_affinity:
        return True
    if o.session_affinity_config != n.session_affinity_config:
        return True
    if (o.load_balancer_ip or "") != (n.load_balancer_ip or ""):
        emit("LoadbalancerIP", f"{o.load_balancer_ip or ''} -> {n.load_balancer_ip or ''}")
        return True
    old_ips, new_ips = list(o.external_ips or ()), list(n.external_ips or ())
    if len(old_ips) != len(new_ips):
        emit("ExternalIP", f"Count: {len(old_ips)} -> {len(new_ips)}")
        return True
    for before, after in zip(old_ips, new_ips, strict=True):
        if before != after:
            emit("ExternalIP", f"Added: {after}")
            return True
    if dict(old.metadata.annotations or {}) != dict(new.metadata.annotations or {}):
        return True
    if old.metadata.uid != new.metadata.uid:
        emit("UID", f"{old.metadata.uid} -> {new.metadata.uid}")
        return True
    if o.external_traffic_policy != n.external_traffic_policy:
        emit(
            "ExternalTrafficPolicy",
            f"{o.external_traffic_policy or ''} -> {n.external_traffic_policy or ''}",
        )
        return True
    if o.health_check_node_port != n.health_check_node_port:
        emit(
            "HealthCheckNodePort",
            f"{o.health_check_node_port or 0} -> {n.health_check_node_port or 0}",
        )
        return True
    return False


def node_ready_status(node: Node) -> str:
    """The Ready condition's status (``""`` without one)."""
    for condition in (node.status.conditions if node.status else None) or ():
        if condition.type == "Ready":
            return condition.status or ""
    return ""


def node_eligible(node: Node) -> bool:
    """Whether a balancer may send traffic to ``node``: not labelled
    ``node.kubernetes.io/exclude-from-external-load-balancers``, not tainted for deletion by
    the cluster autoscaler, has conditions and none of them is a Ready that is not True."""
    if LABEL_NODE_EXCLUDE_BALANCERS in (node.metadata.labels or {}):
        return False
    if any(t.key == TO_BE_DELETED_TAINT for t in (node.spec.taints if node.spec else None) or ()):
        return False
    conditions = (node.status.conditions if node.status else None) or ()
    if not conditions:
        return False
    return all(c.status == "True" for c in conditions if c.type == "Ready")


def should_sync_node(old: Node, new: Node) -> bool:
    """A node change that may change the balancers' hosts: unschedulable, labels, Ready."""
    if bool(old.spec and old.spec.unschedulable) != bool(new.spec and new.spec.unschedulable):
        return True
    if dict(old.metadata.labels or {}) != dict(new.metadata.labels or {}):
        return True
    return node_ready_status(old) != node_ready_status(new)


def load_balancer_status_equal(a: LoadBalancerStatus | None, b: LoadBalancerStatus | None) -> bool:
    """Equal ingress lists (a missing status equals an empty one)."""

    def ingress(s: LoadBalancerStatus | None) -> Sequence[object]:
        return [to_dict(i) for i in ((s.ingress if s else None) or ())]

    return ingress(a) == ingress(b)
