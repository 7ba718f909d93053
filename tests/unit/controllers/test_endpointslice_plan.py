"""The EndpointSlice reconciler's plan (kube's ``reconciler.go`` packing rules), without I/O."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from kcm.controllers.endpointslice import address_types, plan_address_type, pod_to_endpoint
from kcm.controllers.endpointslice._reconciler import SlicePlan, _recycle
from kcm.models.core_v1 import (
    Node,
    Pod,
    PodCondition,
    PodIP,
    PodSpec,
    PodStatus,
    Service,
    ServicePort,
    ServiceSpec,
)
from kcm.models.discovery_v1 import Endpoint, EndpointSlice
from kcm.models.meta_v1 import ObjectMeta
from kcm.runtime import new_controller_ref

SERVICE = Service(
    metadata=ObjectMeta(name="s", namespace="default", uid="svc-uid", labels={"a": "1"}),
    spec=ServiceSpec(
        selector={"app": "web"},
        cluster_ip="10.96.0.10",
        ports=[ServicePort(name="http", port=80, target_port=8080, protocol="TCP")],
    ),
)
NODE = Node(metadata=ObjectMeta(name="n1", labels={"topology.kubernetes.io/zone": "z1"}))


def pod(i: int, *, ready: bool = True, node: str = "n1") -> Pod:
    ip = f"10.0.{i // 250}.{i % 250 + 1}"
    return Pod(
        metadata=ObjectMeta(name=f"p{i:03d}", namespace="default", uid=f"u{i}"),
        spec=PodSpec(node_name=node),
        status=PodStatus(
            phase="Running",
            pod_ip=ip,
            pod_ips=[PodIP(ip=ip)],
            conditions=[PodCondition(type="Ready", status="True" if ready else "False")],
        ),
    )


def plan(
    pods: list[Pod], existing: Sequence[EndpointSlice] = (), max_endpoints: int = 100
) -> SlicePlan:
    return plan_address_type(
        SERVICE,
        pods,
        list(existing),
        "IPv4",
        get_node=lambda name: NODE if name == "n1" else None,
        max_endpoints=max_endpoints,
    )


def existing_slice(name: str, pods: list[Pod], **changes: Any) -> EndpointSlice:
    """A slice as the controller would have written it for ``pods``, now stored."""
    fresh = plan(pods).to_create[0]
    meta = msgspec.structs.replace(fresh.metadata, name=name, generate_name=None)
    return msgspec.structs.replace(fresh, metadata=meta, **changes)


def sizes(slices: list[EndpointSlice]) -> list[int]:
    return sorted(len(s.endpoints or ()) for s in slices)


def test_150_pods_make_two_new_slices_of_at_most_100() -> None:
    result = plan([pod(i) for i in range(150)])
    assert sizes(result.to_create) == [50, 100]
    assert result.to_update == result.to_delete == []


def test_an_endpoint_change_is_an_update_in_place() -> None:
    pods = [pod(i) for i in range(3)]
    current = existing_slice("s-a", pods)
    assert plan(pods, [current]).to_update == []  # nothing changed: nothing written
    pods[1] = pod(1, ready=False)
    result = plan(pods, [current])
    assert [s.metadata.name for s in result.to_update] == ["s-a"]
    assert result.to_create == result.to_delete == []
    endpoints = result.to_update[0].endpoints or ()
    changed = next(e for e in endpoints if "10.0.0.2" in (e.addresses or ()))
    assert changed.conditions is not None
    assert changed.conditions.ready is False


def test_slices_being_updated_are_filled_fullest_first_then_new_ones() -> None:
    full = existing_slice("s-full", [pod(i) for i in range(0, 4)])
    half = existing_slice("s-half", [pod(i) for i in range(4, 6)])
    # one endpoint of each slice goes (both get updated) and 4 new pods come
    pods = [pod(i) for i in (0, 1, 2, 4)] + [pod(i) for i in range(10, 14)]
    result = plan(pods, [full, half], max_endpoints=5)
    by_name = {s.metadata.name: len(s.endpoints or ()) for s in result.to_update}
    assert by_name == {"s-full": 5, "s-half": 3}  # the fuller one filled up first
    assert result.to_create == []


def test_leftovers_go_into_the_unchanged_slice_they_fit_best() -> None:
    a = existing_slice("s-a", [pod(i) for i in range(0, 2)])  # 2 of 5
    b = existing_slice("s-b", [pod(i) for i in range(2, 5)])  # 3 of 5
    pods = [pod(i) for i in range(0, 5)] + [pod(10), pod(11)]
    result = plan(pods, [a, b], max_endpoints=5)
    assert [(s.metadata.name, len(s.endpoints or ())) for s in result.to_update] == [("s-b", 5)]
    assert result.to_create == []


def test_emptied_slices_are_deleted_and_a_placeholder_kept() -> None:
    current = existing_slice("s-a", [pod(0)])
    result = plan([], [current])
    assert [s.metadata.name for s in result.to_delete] == ["s-a"]
    (placeholder,) = result.to_create
    assert placeholder.endpoints == []
    assert placeholder.ports == []
    _recycle(result, SERVICE)  # the create becomes an update of the slice to delete
    assert result.to_create == result.to_delete == []
    assert [(s.metadata.name, s.endpoints) for s in result.to_update] == [("s-a", [])]
    stored = msgspec.structs.replace(result.to_update[0], ports=[])
    assert plan([], [stored]).to_create == []  # an existing placeholder is kept as is


def test_slices_of_another_service_incarnation_are_deleted_not_reused() -> None:
    old_owner = msgspec.structs.replace(
        SERVICE, metadata=msgspec.structs.replace(SERVICE.metadata, uid="old-uid")
    )
    stale = existing_slice("s-old", [pod(0)])
    ref = new_controller_ref(old_owner, "v1", "Service")
    stale = msgspec.structs.replace(
        stale, metadata=msgspec.structs.replace(stale.metadata, owner_references=[ref])
    )
    result = plan([pod(0)], [stale])
    assert [s.metadata.name for s in result.to_delete] == ["s-old"]
    assert len(result.to_create) == 1
    _recycle(result, SERVICE)
    assert len(result.to_create) == 1  # not owned by this Service: never recycled


def test_label_changes_update_unchanged_slices() -> None:
    current = existing_slice("s-a", [pod(0)])
    relabelled = msgspec.structs.replace(
        SERVICE, metadata=msgspec.structs.replace(SERVICE.metadata, labels={"a": "2"})
    )
    result = plan_address_type(
        relabelled,
        [pod(0)],
        [current],
        "IPv4",
        get_node=lambda name: NODE,
        max_endpoints=100,
    )
    assert [(s.metadata.labels or {}).get("a") for s in result.to_update] == ["2"]


def test_pods_on_missing_nodes_are_skipped_with_an_error() -> None:
    result = plan([pod(0), pod(1, node="gone")])
    assert [str(e) for e in result.errors] == [
        "skipping Pod p001 for Service default/s: Node gone Not Found"
    ]
    assert sizes(result.to_create) == [1]


def test_pod_to_endpoint_fields() -> None:
    endpoint = pod_to_endpoint(pod(0), NODE, SERVICE, "IPv4")
    assert endpoint == Endpoint(
        addresses=["10.0.0.1"],
        conditions=endpoint.conditions,
        node_name="n1",
        zone="z1",
        target_ref=endpoint.target_ref,
    )
    assert pod_to_endpoint(pod(0), NODE, SERVICE, "IPv6").addresses == []


def test_address_types() -> None:
    def svc(**spec: Any) -> Service:
        return Service(metadata=ObjectMeta(name="s"), spec=ServiceSpec(**spec))

    assert address_types(svc(ip_families=["IPv6", "IPv4"])) == ["IPv4", "IPv6"]
    assert address_types(svc(cluster_ip="fd00::10")) == ["IPv6"]
    assert address_types(svc(cluster_ip="10.96.0.1")) == ["IPv4"]
    assert address_types(svc(cluster_ip="None")) == ["IPv4", "IPv6"]
