"""The controller kit's Service-endpoint pieces: pods as endpoints, Service membership, trigger
times, endpoint identity and the slice tracker."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kcm.controllerkit import (
    EndpointSet,
    EndpointSliceTracker,
    StaleInformerCache,
    TriggerTimeTracker,
    endpoint_slice_prefix,
    endpoints_equal_beyond_key,
    find_port,
    format_trigger_time,
    is_ipv6,
    pod_endpoints_changed,
    port_map_key,
    service_ip_set,
    service_key_for_slice,
    service_selector,
    services_for_pod,
    services_to_update_on_pod_change,
    should_pod_be_in_endpoints,
    should_set_hostname,
)
from kcm.errors import Conflict
from kcm.models import ObjectKey
from kcm.models.core_v1 import (
    Container,
    ContainerPort,
    Pod,
    PodCondition,
    PodIP,
    PodSpec,
    PodStatus,
    Service,
    ServicePort,
    ServiceSpec,
)
from kcm.models.discovery_v1 import Endpoint, EndpointConditions, EndpointPort, EndpointSlice
from kcm.models.meta_v1 import ObjectMeta

T0 = datetime(2024, 5, 1, 10, 0, 0, tzinfo=UTC)


def pod(
    name: str = "p",
    *,
    labels: dict[str, str] | None = None,
    ip: str | None = "10.0.0.1",
    ready: bool = True,
    ready_since: datetime = T0,
    phase: str = "Running",
    rv: str = "1",
    deleting: bool = False,
    **spec: Any,
) -> Pod:
    return Pod(
        metadata=ObjectMeta(
            name=name,
            namespace="default",
            labels=labels if labels is not None else {"app": "web"},
            resource_version=rv,
            deletion_timestamp=T0 if deleting else None,
        ),
        spec=PodSpec(**spec),
        status=PodStatus(
            phase=phase,
            pod_ip=ip,
            pod_ips=[PodIP(ip=ip)] if ip else None,
            conditions=[
                PodCondition(
                    type="Ready",
                    status="True" if ready else "False",
                    last_transition_time=ready_since,
                )
            ],
        ),
    )


def service(name: str = "s", selector: dict[str, str] | None = None, **spec: Any) -> Service:
    return Service(
        metadata=ObjectMeta(name=name, namespace="default", creation_timestamp=T0),
        spec=ServiceSpec(selector=selector, **spec),
    )


# -- pods as endpoints ----------------------------------------------------------------------


def test_ip_families() -> None:
    assert is_ipv6("fd00::1")
    assert not is_ipv6("10.0.0.1")
    assert not is_ipv6("not an ip")
    assert not is_ipv6(None)


@pytest.mark.parametrize(
    ("policy", "phase", "expected"),
    [
        ("Always", "Failed", True),
        ("Always", "Succeeded", True),
        ("Never", "Failed", False),
        ("Never", "Succeeded", False),
        ("OnFailure", "Failed", True),
        ("OnFailure", "Succeeded", False),
        ("Never", "Running", True),
    ],
)
def test_finished_pods_are_no_endpoints(policy: str, phase: str, expected: bool) -> None:
    p = pod(restart_policy=policy, phase=phase)
    assert should_pod_be_in_endpoints(p, include_terminating=False) is expected


def test_pods_need_an_ip_and_terminating_ones_only_count_when_asked() -> None:
    assert not should_pod_be_in_endpoints(pod(ip=None), include_terminating=True)
    assert not should_pod_be_in_endpoints(pod(deleting=True), include_terminating=False)
    assert should_pod_be_in_endpoints(pod(deleting=True), include_terminating=True)


def test_hostname_needs_the_subdomain_to_name_the_service() -> None:
    assert should_set_hostname(pod(hostname="h", subdomain="s"), service("s"))
    assert not should_set_hostname(pod(hostname="h", subdomain="other"), service("s"))
    assert not should_set_hostname(pod(subdomain="s"), service("s"))


def test_find_port_resolves_names_by_protocol() -> None:
    containers = [
        Container(
            name="c",
            ports=[
                ContainerPort(name="dns", container_port=53, protocol="UDP"),
                ContainerPort(name="http", container_port=8080),
            ],
        )
    ]
    p = pod(containers=containers)
    assert find_port(p, ServicePort(port=80, target_port=9000)) == 9000
    assert find_port(p, ServicePort(port=80)) == 80  # targetPort defaults to port
    assert find_port(p, ServicePort(port=80, target_port="http", protocol="TCP")) == 8080
    assert find_port(p, ServicePort(port=53, target_port="dns", protocol="UDP")) == 53
    assert find_port(p, ServicePort(port=53, target_port="dns", protocol="TCP")) is None
    assert find_port(p, ServicePort(port=80, target_port="missing")) is None


# -- Service membership ---------------------------------------------------------------------


def test_selectors_and_headless() -> None:
    assert service_selector(service(selector={})) is None  # {} reads back as none from etcd
    assert service_selector(service()) is None
    assert service_selector(service(selector={"a": "b"})) == {"a": "b"}
    assert service_ip_set(service(cluster_ip="10.96.0.1"))
    assert not service_ip_set(service(cluster_ip="None"))
    assert not service_ip_set(service())


def test_services_for_pod() -> None:
    services = [
        service("web", {"app": "web"}),
        service("tier", {"app": "web", "tier": "front"}),
        service("manual"),
    ]
    assert services_for_pod(services, pod()) == {ObjectKey("default", "web")}
    front = pod(labels={"app": "web", "tier": "front"})
    assert services_for_pod(services, front) == {
        ObjectKey("default", "web"),
        ObjectKey("default", "tier"),
    }


def test_pod_changes_that_matter() -> None:
    old = pod()
    assert pod_endpoints_changed(old, pod(ready=False)) == (True, False)
    assert pod_endpoints_changed(old, pod(ip="10.0.0.2")) == (True, False)
    assert pod_endpoints_changed(old, pod(deleting=True)) == (True, False)
    assert pod_endpoints_changed(old, pod(labels={"app": "x"})) == (False, True)
    assert pod_endpoints_changed(old, pod(hostname="h")) == (False, True)
    assert pod_endpoints_changed(old, pod(phase="Pending")) == (False, False)


def test_services_to_update_on_pod_change() -> None:
    services = [service("web", {"app": "web"}), service("api", {"app": "api"})]
    web, api = ObjectKey("default", "web"), ObjectKey("default", "api")
    old = pod()
    assert services_to_update_on_pod_change(services, old, old) == set()  # a resync
    assert services_to_update_on_pod_change(services, old, pod(rv="2", phase="x")) == set()
    assert services_to_update_on_pod_change(services, old, pod(rv="2", ready=False)) == {web}
    moved = pod(rv="2", labels={"app": "api"})
    assert services_to_update_on_pod_change(services, old, moved) == {web, api}
    both = pod(rv="2", labels={"app": "web", "x": "y"})
    assert services_to_update_on_pod_change(services, old, both) == set()  # same services
    both_and_ready = pod(rv="2", labels={"app": "web", "x": "y"}, ready=False)
    assert services_to_update_on_pod_change(services, old, both_and_ready) == {web}


# -- trigger times --------------------------------------------------------------------------


def test_trigger_time_format_is_rfc3339nano() -> None:
    assert format_trigger_time(T0) == "2024-05-01T10:00:00Z"
    assert format_trigger_time(T0.replace(microsecond=500000)) == "2024-05-01T10:00:00.5Z"


def test_trigger_times() -> None:
    tracker = TriggerTimeTracker()
    s = service(selector={"app": "web"})
    a = pod("a", ready_since=datetime(2024, 5, 1, 10, 5, tzinfo=UTC))
    assert tracker.compute(s, [a]) == T0  # a new Service: its creation
    assert tracker.compute(s, [a]) is None  # nothing new
    b = pod("b", ready_since=datetime(2024, 5, 1, 10, 7, tzinfo=UTC))
    a2 = pod("a", ready_since=datetime(2024, 5, 1, 10, 9, tzinfo=UTC))
    assert tracker.compute(s, [a2, b]) == datetime(2024, 5, 1, 10, 7, tzinfo=UTC)  # earliest
    tracker.delete_service(ObjectKey("default", "s"))
    assert tracker.compute(s, [a2, b]) == T0


# -- endpoint identity, port groups, slices -------------------------------------------------


def ep(*addresses: str, ready: bool = True, hostname: str | None = None) -> Endpoint:
    return Endpoint(
        addresses=list(addresses), hostname=hostname, conditions=EndpointConditions(ready=ready)
    )


def test_endpoint_set_identity_is_addresses_and_hostname() -> None:
    endpoints = EndpointSet([ep("10.0.0.1"), ep("10.0.0.2"), ep("10.0.0.2", hostname="h")])
    assert len(endpoints) == 3
    assert endpoints.get(ep("10.0.0.1", ready=False)) == ep("10.0.0.1")
    endpoints.add(ep("10.0.0.1", ready=False))  # same identity: replaced
    assert len(endpoints) == 3
    assert endpoints.pop() == ep("10.0.0.1", ready=False)  # oldest first
    endpoints.discard(ep("10.0.0.2"))
    assert [e.hostname for e in endpoints] == ["h"]
    assert ep("10.0.0.2", hostname="h") in endpoints


def test_endpoints_equal_beyond_key() -> None:
    assert endpoints_equal_beyond_key(ep("10.0.0.1"), ep("10.0.0.1"))
    assert not endpoints_equal_beyond_key(ep("10.0.0.1"), ep("10.0.0.1", ready=False))
    zoned = Endpoint(addresses=["10.0.0.1"], conditions=EndpointConditions(ready=True), zone="z")
    assert not endpoints_equal_beyond_key(ep("10.0.0.1"), zoned)


def test_port_map_key_ignores_order() -> None:
    a = EndpointPort(name="a", port=1, protocol="TCP")
    b = EndpointPort(name="b", port=2, protocol="TCP")
    assert port_map_key([a, b]) == port_map_key([b, a])
    assert port_map_key([a]) != port_map_key([b])
    assert port_map_key(None) == port_map_key([])


def slice_(name: str, uid: str, generation: int, service_name: str = "s") -> EndpointSlice:
    return EndpointSlice(
        metadata=ObjectMeta(
            name=name,
            namespace="default",
            uid=uid,
            generation=generation,
            labels={"kubernetes.io/service-name": service_name},
        )
    )


def test_slice_names_and_keys() -> None:
    assert endpoint_slice_prefix("web") == "web-"
    assert endpoint_slice_prefix("x" * 253) == "x" * 253
    assert service_key_for_slice(slice_("a", "u", 1)) == ObjectKey("default", "s")
    assert service_key_for_slice(EndpointSlice(metadata=ObjectMeta(name="a"))) is None


def test_tracker_tells_own_writes_from_others() -> None:
    tracker = EndpointSliceTracker()
    key = ObjectKey("default", "s")
    one = slice_("s-1", "u1", 1)
    assert tracker.should_sync(one)  # untracked: someone else's
    assert not tracker.stale_slices(key, [one])
    tracker.update(slice_("s-1", "u1", 2))  # we wrote generation 2
    assert tracker.stale_slices(key, [one])  # the cache still shows 1
    assert not tracker.should_sync(slice_("s-1", "u1", 2))  # our own write coming back
    assert tracker.should_sync(slice_("s-1", "u1", 3))  # someone changed it after us
    assert not tracker.stale_slices(key, [slice_("s-1", "u1", 2)])
    assert tracker.stale_slices(key, [])  # a tracked slice missing from the cache
    tracker.expect_deletion(one)
    assert tracker.stale_slices(key, [one])  # we deleted it; the cache still has it
    assert not tracker.stale_slices(key, [])
    assert tracker.handle_deletion(one)  # expected
    tracker.update(slice_("s-2", "u2", 1))
    assert tracker.has(slice_("s-2", "u2", 1))
    assert not tracker.handle_deletion(slice_("s-2", "u2", 1))  # someone deleted ours
    tracker.update(slice_("s-3", "u3", 1))
    tracker.delete_service(key)
    assert not tracker.has(slice_("s-3", "u3", 1))


def test_stale_cache_is_a_conflict() -> None:
    assert isinstance(StaleInformerCache(), Conflict)
