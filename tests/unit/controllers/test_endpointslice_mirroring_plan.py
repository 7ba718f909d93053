"""The mirroring controller's plan, without I/O."""

from __future__ import annotations

import msgspec

from kcm.controllers.endpointslicemirroring import address_type, plan_mirror, should_mirror
from kcm.models.core_v1 import EndpointAddress, EndpointPort, Endpoints, EndpointSubset
from kcm.models.discovery_v1 import EndpointSlice
from kcm.models.meta_v1 import ObjectMeta

SUBSET = EndpointSubset(
    addresses=[EndpointAddress(ip="192.0.2.1")],
    ports=[EndpointPort(name="https", port=443, protocol="TCP")],
)
EP = Endpoints(metadata=ObjectMeta(name="ext", namespace="default", uid="ep-uid"), subsets=[SUBSET])


def test_address_types_as_go_parses_them() -> None:
    assert address_type("192.0.2.1") == "IPv4"
    assert address_type("010.000.002.001") == "IPv4"  # ParseIPSloppy: leading zeros
    assert address_type("2001:db8::1") == "IPv6"
    assert address_type("::ffff:192.0.2.1") == "IPv4"  # IPv4-mapped: To4() != nil
    assert address_type("example.com") is None
    assert address_type("") is None


def test_should_mirror() -> None:
    assert should_mirror(EP)
    skip = ObjectMeta(name="x", labels={"endpointslice.kubernetes.io/skip-mirror": "true"})
    assert not should_mirror(Endpoints(metadata=skip))
    lock = ObjectMeta(name="x", annotations={"control-plane.alpha.kubernetes.io/leader": ""})
    assert not should_mirror(Endpoints(metadata=lock))


def stored(plan_slice: EndpointSlice, name: str) -> EndpointSlice:
    meta = msgspec.structs.replace(plan_slice.metadata, name=name, generate_name=None)
    return msgspec.structs.replace(plan_slice, metadata=meta)


def test_one_slice_per_group_and_nothing_when_in_sync() -> None:
    plan, invalid, skipped = plan_mirror(EP, [], 1000)
    assert (invalid, skipped) == (0, 0)
    (created,) = plan.to_create
    existing = stored(created, "ext-abc")
    again, _, _ = plan_mirror(EP, [existing], 1000)
    assert (again.to_create, again.to_update, again.to_delete) == ([], [], [])


def test_a_changed_port_recycles_the_old_slice() -> None:
    plan, _, _ = plan_mirror(EP, [], 1000)
    existing = stored(plan.to_create[0], "ext-abc")
    moved = msgspec.structs.replace(
        EP,
        subsets=[
            msgspec.structs.replace(
                SUBSET,
                ports=[EndpointPort(name="https", port=8443, protocol="TCP")],
            )
        ],
    )
    plan, _, _ = plan_mirror(moved, [existing], 1000)
    assert plan.to_create == plan.to_delete == []
    (updated,) = plan.to_update
    assert updated.metadata.name == "ext-abc"
    assert [p.port for p in updated.ports or ()] == [8443]
