"""The service controller's decisions from objects alone: wants, cleanup, updates, nodes."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from kcm.controllers.service._predicates import (
    load_balancer_status_equal,
    needs_cleanup,
    needs_update,
    node_eligible,
    should_sync_node,
    wants_load_balancer,
)
from kcm.models.core_v1 import (
    LoadBalancerIngress,
    LoadBalancerStatus,
    Node,
    NodeCondition,
    NodeSpec,
    NodeStatus,
    Service,
    ServicePort,
    ServiceSpec,
    Taint,
)
from kcm.models.meta_v1 import ObjectMeta

FINALIZER = "service.kubernetes.io/load-balancer-cleanup"


def svc(*, finalizer: bool = False, deleting: bool = False, **spec: Any) -> Service:
    spec.setdefault("type", "LoadBalancer")
    spec.setdefault("ports", [ServicePort(port=80, protocol="TCP")])
    return Service(
        metadata=ObjectMeta(
            name="s",
            uid="u1",
            finalizers=[FINALIZER] if finalizer else None,
            deletion_timestamp="2026-01-01T00:00:00Z" if deleting else None,  # type: ignore[arg-type]
        ),
        spec=ServiceSpec(**spec),
    )


def test_wants_and_cleanup() -> None:
    assert wants_load_balancer(svc())
    assert not wants_load_balancer(svc(load_balancer_class="x"))
    assert not wants_load_balancer(svc(type="NodePort"))
    assert not needs_cleanup(svc())
    assert needs_cleanup(svc(finalizer=True, type="ClusterIP"))
    assert needs_cleanup(svc(finalizer=True, deleting=True))
    assert not needs_cleanup(svc(finalizer=True))


@pytest.mark.parametrize(
    ("change", "events"),
    [
        ({"type": "NodePort"}, ["Type LoadBalancer -> NodePort"]),
        (
            {"load_balancer_source_ranges": ["1.0.0.0/8", "2.0.0.0/8"]},
            ["LoadBalancerSourceRanges [] -> [1.0.0.0/8 2.0.0.0/8]"],
        ),
        ({"ports": [ServicePort(port=81, protocol="TCP")]}, []),
        ({"session_affinity": "ClientIP"}, []),
        ({"load_balancer_ip": "1.2.3.4"}, ["LoadbalancerIP  -> 1.2.3.4"]),
        ({"external_ips": ["5.5.5.5"]}, ["ExternalIP Count: 0 -> 1"]),
        ({"external_traffic_policy": "Local"}, ["ExternalTrafficPolicy  -> Local"]),
        ({"health_check_node_port": 30000}, ["HealthCheckNodePort 0 -> 30000"]),
    ],
)
def test_lb_relevant_changes_need_an_update_with_the_real_events(
    change: dict[str, Any], events: list[str]
) -> None:
    old = svc()
    assert old.spec is not None
    new = msgspec.structs.replace(old, spec=msgspec.structs.replace(old.spec, **change))
    seen: list[str] = []
    assert needs_update(old, new, lambda reason, message: seen.append(f"{reason} {message}"))
    assert seen == events


def test_irrelevant_changes_and_non_lb_services_need_no_update() -> None:
    old = svc()
    assert old.spec is not None
    new = msgspec.structs.replace(old, spec=msgspec.structs.replace(old.spec, selector={"a": "b"}))
    assert not needs_update(old, new, lambda *_: None)
    plain = svc(type="ClusterIP")
    assert not needs_update(plain, svc(type="ClusterIP", ports=[]), lambda *_: None)


def node(ready: str | None = "True", **meta: Any) -> Node:
    taints = meta.pop("taints", None)
    return Node(
        metadata=ObjectMeta(name="n", **meta),
        spec=NodeSpec(taints=taints),
        status=NodeStatus(
            conditions=[NodeCondition(type="Ready", status=ready)] if ready else None
        ),
    )


def test_node_eligibility() -> None:
    assert node_eligible(node())
    assert not node_eligible(node("False"))
    assert not node_eligible(node("Unknown"))
    assert not node_eligible(node(None))
    assert not node_eligible(
        node(labels={"node.kubernetes.io/exclude-from-external-load-balancers": ""})
    )
    assert not node_eligible(
        node(taints=[Taint(key="ToBeDeletedByClusterAutoscaler", effect="NoSchedule")])
    )


def test_node_changes_that_trigger_a_host_sync() -> None:
    assert should_sync_node(node(), node("False"))
    assert should_sync_node(node(), node(labels={"a": "b"}))
    assert not should_sync_node(node(), node(annotations={"a": "b"}))


def test_status_equality_compares_ingress() -> None:
    one = LoadBalancerStatus(ingress=[LoadBalancerIngress(ip="1.1.1.1")])
    assert load_balancer_status_equal(None, LoadBalancerStatus())
    assert not load_balancer_status_equal(None, one)
    assert load_balancer_status_equal(
        one, LoadBalancerStatus(ingress=[LoadBalancerIngress(ip="1.1.1.1")])
    )
