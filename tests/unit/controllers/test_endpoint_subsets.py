"""The Endpoints controller's pure parts: subsets from pods, repacking in Go's order,
truncation, the tolerate-unready annotation.

The ``go_spew`` vectors were printed by Go's spew (``hashutil.DeepHashObject``'s settings) on
the Kubernetes 1.24 types, and the repack order by Go's ``endpoints.RepackSubsets``.
"""

from __future__ import annotations

import hashlib
from typing import Any

from kcm.controllers.endpoint import (
    TOLERATE_UNREADY_ANNOTATION,
    desired_subsets,
    go_spew,
    repack_subsets,
    truncate_subsets,
)
from kcm.controllers.endpoint._repack import Entry
from kcm.controllers.endpoint._subsets import capacity_annotation_set_correctly, tolerate_unready
from kcm.models.core_v1 import (
    EndpointAddress,
    EndpointPort,
    EndpointSubset,
    ObjectReference,
    Pod,
    PodCondition,
    PodIP,
    PodSpec,
    PodStatus,
    Service,
    ServicePort,
    ServiceSpec,
)
from kcm.models.meta_v1 import ObjectMeta

P1 = EndpointPort(name="http", port=8080, protocol="TCP")
P2 = EndpointPort(name="https", port=8443, protocol="TCP", app_protocol="h2c")
A = EndpointAddress(
    ip="10.0.0.1",
    node_name="n1",
    target_ref=ObjectReference(
        kind="Pod", namespace="default", name="a", uid="uid-a", resource_version="12"
    ),
)
B = EndpointAddress(
    ip="10.0.0.2",
    hostname="h",
    node_name="n1",
    target_ref=ObjectReference(
        kind="Pod", namespace="default", name="b", uid="uid-b", resource_version="13"
    ),
)


def md5(text: str) -> str:
    return hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()


def test_go_spew_of_ports_matches_go() -> None:
    text = go_spew(P1)
    assert text == (
        "(v1.EndpointPort){Name:(string)http Port:(int32)8080 Protocol:(v1.Protocol)TCP "
        "AppProtocol:(*string)<nil>}"
    )
    assert md5(text) == "fc51ca7087ce52e70c38709727f8f0b6"
    assert md5(go_spew(P2)) == "5f381e3f958cb1361077f0d9a4de5f3e"


def test_go_spew_of_subsets_matches_go() -> None:
    ready = EndpointSubset(addresses=[A], ports=[P1, P2])
    assert md5(go_spew(ready)) == "4800fbd97c693fdd048708e7a6d8d387"
    not_ready = EndpointSubset(not_ready_addresses=[B])
    assert go_spew(not_ready) == (
        "(v1.EndpointSubset){Addresses:([]v1.EndpointAddress)<nil> "
        "NotReadyAddresses:([]v1.EndpointAddress)[{IP:(string)10.0.0.2 Hostname:(string)h "
        "NodeName:(*string)n1 TargetRef:(*v1.ObjectReference){Kind:(string)Pod "
        "Namespace:(string)default Name:(string)b UID:(types.UID)uid-b APIVersion:(string) "
        "ResourceVersion:(string)13 FieldPath:(string)}}] Ports:([]v1.EndpointPort)<nil>}"
    )
    assert md5(go_spew(not_ready)) == "2043a53feb84489890b093436ae3a8bb"


def test_repack_groups_ports_by_address_set_in_gos_order() -> None:
    x = EndpointPort(name="x", port=1, protocol="UDP")
    subsets = repack_subsets(
        [
            Entry(A, P1, True),
            Entry(A, P2, True),
            Entry(B, P1, False),
            Entry(B, x, True),
        ]
    )
    shape = [
        (len(s.addresses or ()), len(s.not_ready_addresses or ()), [p.name for p in s.ports or ()])
        for s in subsets
    ]
    assert shape == [(1, 0, ["x"]), (1, 1, ["http"]), (1, 0, ["https"])]


def test_not_ready_on_one_port_is_not_ready() -> None:
    subsets = repack_subsets([Entry(A, P1, True), Entry(A, P1, False)])
    assert [(s.addresses, list(s.not_ready_addresses or ())) for s in subsets] == [(None, [A])]


def test_addresses_sort_by_ip_bytes_then_uid() -> None:
    def at(ip: str, uid: str | None) -> EndpointAddress:
        return EndpointAddress(ip=ip, target_ref=ObjectReference(uid=uid) if uid else None)

    entries = [
        Entry(at("10.0.0.9", "a"), P1, True),
        Entry(at("10.0.0.10", "b"), P1, True),
        Entry(at("10.0.0.10", "a"), P1, True),
        Entry(at("10.0.0.10", None), P1, True),
    ]
    (subset,) = repack_subsets(entries)
    order = [(a.ip, a.target_ref.uid if a.target_ref else None) for a in subset.addresses or ()]
    assert order == [
        ("10.0.0.10", None),
        ("10.0.0.10", "a"),
        ("10.0.0.10", "b"),
        ("10.0.0.9", "a"),
    ]


def make_pod(name: str, ip: str, *, ready: bool = True, **spec: Any) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace="default", uid=f"uid-{name}"),
        spec=PodSpec(node_name="n1", **spec),
        status=PodStatus(
            phase="Running",
            pod_ip=ip,
            pod_ips=[PodIP(ip=ip)],
            conditions=[PodCondition(type="Ready", status="True" if ready else "False")],
        ),
    )


def make_service(**spec: Any) -> Service:
    annotations = spec.pop("annotations", None)
    return Service(
        metadata=ObjectMeta(name="s", namespace="default", annotations=annotations),
        spec=ServiceSpec(selector={"app": "web"}, **spec),
    )


def test_desired_subsets_of_a_headless_service_without_ports() -> None:
    pods = [make_pod("a", "10.0.0.1"), make_pod("b", "10.0.0.2", ready=False)]
    (subset,) = desired_subsets(make_service(cluster_ip="None"), pods, tolerate_unready=False)
    assert subset.ports is None
    assert [a.ip for a in subset.addresses or ()] == ["10.0.0.1"]
    assert [a.ip for a in subset.not_ready_addresses or ()] == ["10.0.0.2"]
    # a Service with a cluster IP and no ports gets nothing
    assert desired_subsets(make_service(cluster_ip="10.96.0.1"), pods, tolerate_unready=False) == []


def test_endpoint_ports_keep_name_protocol_and_app_protocol() -> None:
    port = ServicePort(name="web", port=80, target_port=8080, protocol="TCP", app_protocol="http")
    (subset,) = desired_subsets(
        make_service(ports=[port]), [make_pod("a", "10.0.0.1")], tolerate_unready=False
    )
    assert list(subset.ports or ()) == [
        EndpointPort(name="web", port=8080, protocol="TCP", app_protocol="http")
    ]


def test_tolerate_unready_annotation_overrides_the_field() -> None:
    assert tolerate_unready(make_service(publish_not_ready_addresses=True))
    assert not tolerate_unready(make_service())
    for text, expected in (("true", True), ("1", True), ("F", False), ("false", False)):
        annotations = {TOLERATE_UNREADY_ANNOTATION: text}
        svc = make_service(publish_not_ready_addresses=not expected, annotations=annotations)
        assert tolerate_unready(svc) is expected
    junk = make_service(
        publish_not_ready_addresses=True, annotations={TOLERATE_UNREADY_ANNOTATION: "yes"}
    )
    assert tolerate_unready(junk)  # not a Go bool: the field decides


def addrs(n: int, prefix: str) -> list[EndpointAddress]:
    return [EndpointAddress(ip=f"{prefix}.{i}") for i in range(n)]


def test_truncation_keeps_ready_first_spread_by_proportion() -> None:
    subsets = [
        EndpointSubset(addresses=addrs(600, "10.0.1"), not_ready_addresses=addrs(10, "10.1.1")),
        EndpointSubset(addresses=addrs(300, "10.0.2"), not_ready_addresses=addrs(300, "10.1.2")),
    ]
    kept, truncated = truncate_subsets(subsets)
    assert truncated
    # 100 places for 310 not-ready addresses: ceil(10/310*100) = 4, then the 96 left
    assert [(len(s.addresses or ()), len(s.not_ready_addresses or ())) for s in kept] == [
        (600, 4),
        (300, 96),
    ]
    many = [
        EndpointSubset(addresses=addrs(900, "10.0.1"), not_ready_addresses=addrs(5, "10.1.1")),
        EndpointSubset(addresses=addrs(300, "10.0.2")),
    ]
    kept, truncated = truncate_subsets(many)
    # more than 1000 ready: ready ones spread 750/250, every not-ready one dropped
    assert [(len(s.addresses or ()), len(s.not_ready_addresses or ())) for s in kept] == [
        (750, 0),
        (250, 0),
    ]
    assert truncate_subsets(kept) == (kept, False)


def test_capacity_annotation() -> None:
    small = [EndpointSubset(addresses=addrs(3, "10.0.0"))]
    big = [EndpointSubset(addresses=addrs(1001, "10.0.0"))]
    over = {"endpoints.kubernetes.io/over-capacity": "truncated"}
    assert capacity_annotation_set_correctly(None, small)
    assert not capacity_annotation_set_correctly(over, small)  # must be removed
    assert not capacity_annotation_set_correctly(None, big)  # must be truncated
