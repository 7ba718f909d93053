"""The EndpointSlice mirroring controller against the embedded API server on a fake clock."""

from __future__ import annotations

from typing import Any

import pytest

from kcm.controllers.endpointslicemirroring import EndpointSliceMirroringController
from kcm.models.core_v1 import (
    EndpointAddress,
    EndpointPort,
    Endpoints,
    EndpointSubset,
    ObjectReference,
)
from kcm.models.discovery_v1 import EndpointConditions, EndpointSlice
from kcm.models.meta_v1 import ObjectMeta
from tests.integration.controllers.endpoints.ep_harness import NS, Env, running

pytestmark = pytest.mark.anyio

MIRRORED = {"endpointslice.kubernetes.io/managed-by": "endpointslicemirroring-controller.k8s.io"}


def mirroring(**options: Any) -> Any:
    def make(
        client: Any, factory: Any, clock: Any, recorder: Any
    ) -> EndpointSliceMirroringController:
        return EndpointSliceMirroringController(
            client, factory, recorder=recorder, clock=clock, **options
        )

    return make


def endpoints(
    name: str = "ext",
    *subsets: EndpointSubset,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> Endpoints:
    return Endpoints(
        metadata=ObjectMeta(name=name, namespace=NS, labels=labels, annotations=annotations),
        subsets=list(subsets) or None,
    )


def subset(*ips: str, not_ready: tuple[str, ...] = (), port: int = 443) -> EndpointSubset:
    return EndpointSubset(
        addresses=[EndpointAddress(ip=ip) for ip in ips] or None,
        not_ready_addresses=[EndpointAddress(ip=ip) for ip in not_ready] or None,
        ports=[EndpointPort(name="https", port=port, protocol="TCP")],
    )


def addresses(slices: list[EndpointSlice]) -> list[str]:
    return sorted(a for s in slices for e in s.endpoints or () for a in e.addresses or ())


async def mirrored(env: Env, name: str = "ext") -> list[EndpointSlice]:
    await env.quiesce()
    return await env.slices_of(name)


async def test_custom_endpoints_of_a_selectorless_service_are_mirrored() -> None:
    async with running(mirroring()) as env:
        await env.service("ext")
        target = ObjectReference(kind="Pod", namespace=NS, name="x", uid="u1")
        ep = endpoints(
            "ext",
            EndpointSubset(
                addresses=[EndpointAddress(ip="192.0.2.1", hostname="one", target_ref=target)],
                not_ready_addresses=[EndpointAddress(ip="192.0.2.2", node_name="n1")],
                ports=[EndpointPort(name="https", port=443, protocol="TCP")],
            ),
            labels={"team": "a"},
            annotations={"note": "x", "endpoints.kubernetes.io/last-change-trigger-time": "t"},
        )
        created = await env.endpoints.create(ep)
        (es,) = await mirrored(env)
        assert (es.metadata.name or "").startswith("ext-")
        assert es.address_type == "IPv4"
        assert es.metadata.labels == {
            "team": "a",
            "kubernetes.io/service-name": "ext",
            **MIRRORED,
        }
        assert es.metadata.annotations == {"note": "x"}  # not the trigger time
        (ref,) = es.metadata.owner_references or ()
        assert (ref.kind, ref.name, ref.uid, ref.controller) == (
            "Endpoints",
            "ext",
            created.metadata.uid,
            True,
        )
        assert [(p.name, p.port, p.protocol) for p in es.ports or ()] == [("https", 443, "TCP")]
        by_ip = {(e.addresses or ())[0]: e for e in es.endpoints or ()}
        assert by_ip["192.0.2.1"].conditions == EndpointConditions(ready=True)
        assert by_ip["192.0.2.1"].hostname == "one"
        assert by_ip["192.0.2.1"].target_ref == target
        assert by_ip["192.0.2.2"].conditions == EndpointConditions(ready=False)
        assert by_ip["192.0.2.2"].node_name == "n1"


async def test_changes_are_followed_and_deletions_clean_up() -> None:
    async with running(mirroring()) as env:
        await env.service("ext")
        await env.endpoints.create(endpoints("ext", subset("192.0.2.1")))
        (first,) = await mirrored(env)
        await env.endpoints.patch(
            "ext", {"subsets": [{"addresses": [{"ip": "192.0.2.7"}], "ports": [{"port": 443}]}]}
        )
        (changed,) = await mirrored(env)
        assert addresses([changed]) == ["192.0.2.7"]
        assert changed.metadata.name == first.metadata.name  # rewritten in place
        await env.endpoints.delete("ext")
        assert await mirrored(env) == []


async def test_dual_stack_and_port_groups_get_a_slice_each() -> None:
    async with running(mirroring()) as env:
        await env.service("ext")
        await env.endpoints.create(
            endpoints(
                "ext",
                subset("192.0.2.1", "2001:db8::1"),
                subset("192.0.2.9", port=8443),
            )
        )
        slices = await mirrored(env)
        shape = sorted(
            (s.address_type, [p.port for p in s.ports or ()], addresses([s])) for s in slices
        )
        assert shape == [
            ("IPv4", [443], ["192.0.2.1"]),
            ("IPv4", [8443], ["192.0.2.9"]),
            ("IPv6", [443], ["2001:db8::1"]),
        ]


async def test_not_mirrored_without_a_selectorless_service() -> None:
    async with running(mirroring()) as env:
        await env.endpoints.create(endpoints("orphan", subset("192.0.2.1")))
        assert await mirrored(env, "orphan") == []  # no Service
        await env.service("orphan")
        assert addresses(await mirrored(env, "orphan")) == ["192.0.2.1"]
        await env.services.patch("orphan", {"spec": {"selector": {"app": "web"}}})
        assert await mirrored(env, "orphan") == []  # a selector: the other controllers' job


async def test_skip_mirror_label_and_leader_election_locks() -> None:
    async with running(mirroring()) as env:
        await env.service("skip")
        await env.service("lock")
        skip = {"endpointslice.kubernetes.io/skip-mirror": "true"}
        lock = {"control-plane.alpha.kubernetes.io/leader": "{}"}
        await env.endpoints.create(endpoints("skip", subset("192.0.2.1"), labels=skip))
        await env.endpoints.create(endpoints("lock", subset("192.0.2.2"), annotations=lock))
        assert await mirrored(env, "skip") == []
        assert await mirrored(env, "lock") == []
        await env.endpoints.patch(
            "skip", {"metadata": {"labels": {"endpointslice.kubernetes.io/skip-mirror": None}}}
        )
        assert addresses(await mirrored(env, "skip")) == ["192.0.2.1"]


async def test_at_most_max_addresses_per_subset_and_invalid_ones_are_reported() -> None:
    async with running(mirroring(max_endpoints_per_subset=2)) as env:
        await env.service("ext")
        await env.endpoints.create(
            endpoints("ext", subset("192.0.2.1", "not-an-ip", "192.0.2.2", "192.0.2.3"))
        )
        assert addresses(await mirrored(env)) == ["192.0.2.1", "192.0.2.2"]
        assert (
            "Warning InvalidIPAddress Skipped 1 invalid IP addresses when mirroring to "
            "EndpointSlices" in env.recorder.events
        )
        assert (
            "Warning TooManyAddressesToMirror A max of 2 addresses can be mirrored to "
            "EndpointSlices per Endpoints subset. 2 addresses were skipped"
        ) in env.recorder.events


async def test_hand_edits_of_mirrored_slices_are_reverted() -> None:
    async with running(mirroring()) as env:
        await env.service("ext")
        await env.endpoints.create(endpoints("ext", subset("192.0.2.1")))
        (es,) = await mirrored(env)
        await env.slices.patch(str(es.metadata.name), {"endpoints": []})
        assert addresses(await mirrored(env)) == ["192.0.2.1"]
        await env.slices.delete(str(es.metadata.name))
        assert addresses(await mirrored(env)) == ["192.0.2.1"]


async def test_batch_period_delays_the_repair() -> None:
    async with running(mirroring(batch_period=3.0)) as env:
        await env.service("ext")
        await env.endpoints.create(endpoints("ext", subset("192.0.2.1")))
        (es,) = await mirrored(env)
        await env.slices.patch(str(es.metadata.name), {"endpoints": []})
        await env.clock.advance(2.9)
        assert addresses(await mirrored(env)) == []
        await env.clock.advance(0.1)
        assert addresses(await mirrored(env)) == ["192.0.2.1"]
