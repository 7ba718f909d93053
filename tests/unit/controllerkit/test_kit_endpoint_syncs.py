"""What the Service endpoint controllers share besides the pure helpers: the pod event handler
(:class:`ServicePodEvents`), syncs held back by a stale slice cache (:class:`StaleSliceSyncs`)
and the retry limit (:func:`sync_with_retry_limit`)."""

from __future__ import annotations

import pytest

from kcm.controllerkit import (
    MAX_SYNC_RETRIES,
    ServicePodEvents,
    StaleInformerCache,
    StaleSliceSyncs,
    sync_with_retry_limit,
)
from kcm.errors import Conflict
from kcm.informers import Indexer, Lister
from kcm.models import ObjectKey
from kcm.models.core_v1 import Pod, PodCondition, PodStatus, Service, ServiceSpec
from kcm.models.discovery_v1 import EndpointSlice
from kcm.models.meta_v1 import ObjectMeta
from kcm.runtime import Result, TerminalError

WEB = ObjectKey("default", "web")
API = ObjectKey("default", "api")


def _service(name: str, app: str, namespace: str = "default") -> Service:
    return Service(
        metadata=ObjectMeta(name=name, namespace=namespace),
        spec=ServiceSpec(selector={"app": app}),
    )


def _pod(app: str, *, rv: str = "1", ready: bool = True, namespace: str = "default") -> Pod:
    return Pod(
        metadata=ObjectMeta(
            name="p", namespace=namespace, labels={"app": app}, resource_version=rv
        ),
        status=PodStatus(
            pod_ip="10.0.0.1",
            conditions=[PodCondition(type="Ready", status="True" if ready else "False")],
        ),
    )


def _events(batch_period: float = 0.0) -> tuple[ServicePodEvents, list[tuple[ObjectKey, float]]]:
    indexer: Indexer[Service] = Indexer()
    for service in (_service("web", "web"), _service("api", "api"), _service("x", "web", "o")):
        indexer.add(service)
    later: list[tuple[ObjectKey, float]] = []
    events = ServicePodEvents(
        Lister(indexer), lambda key, delay: later.append((key, delay)), batch_period
    )
    return events, later


def test_pod_events_queue_the_services_of_the_pods_namespace_after_the_batch_period() -> None:
    events, later = _events(batch_period=2.5)
    assert list(events.create_keys(_pod("web"), is_in_initial_list=False)) == []
    assert later == [(WEB, 2.5)]  # not o/x: another namespace
    later.clear()
    assert list(events.delete_keys(_pod("api"), final_state_unknown=False)) == []
    assert later == [(API, 2.5)]


def test_pod_updates_queue_the_services_before_and_after_a_relevant_change() -> None:
    events, later = _events()
    old = _pod("web")
    assert list(events.update_keys(old, old)) == []  # a resync changes nothing
    assert later == []
    events.update_keys(old, _pod("web", rv="2", ready=False))
    assert later == [(WEB, 0.0)]
    later.clear()
    events.update_keys(old, _pod("api", rv="2"))  # moved from one Service to the other
    assert sorted(later) == [(API, 0.0), (WEB, 0.0)]


def _slice(service: str | None) -> EndpointSlice:
    labels = {"kubernetes.io/service-name": service} if service else None
    return EndpointSlice(metadata=ObjectMeta(name="s-1", namespace="default", labels=labels))


def test_a_stale_sync_runs_again_when_a_slice_of_its_service_moves() -> None:
    added: list[ObjectKey] = []
    syncs = StaleSliceSyncs(added.append)
    syncs.cache_moved(_slice("web"))
    assert added == []  # nothing was waiting
    error = syncs.stale(WEB)
    assert isinstance(error, StaleInformerCache)
    assert isinstance(error, Conflict)
    assert WEB in syncs
    syncs.cache_moved(_slice("api"))
    syncs.cache_moved(_slice(None))
    assert added == []  # other Services' slices, or none
    syncs.cache_moved(_slice("web"))
    assert added == [WEB]
    assert WEB not in syncs
    syncs.cache_moved(_slice("web"))
    assert added == [WEB]  # queued once


def test_a_sync_that_starts_is_no_longer_waiting() -> None:
    added: list[ObjectKey] = []
    syncs = StaleSliceSyncs(added.append)
    assert str(syncs.stale(API, "slices moved")) != ""
    syncs.starting(API)
    syncs.cache_moved(_slice("api"))
    assert added == []


@pytest.mark.anyio
async def test_a_failing_sync_is_raised_again_until_the_retry_limit() -> None:
    calls: list[ObjectKey] = []

    async def ok(key: ObjectKey) -> None:
        calls.append(key)

    async def failing(key: ObjectKey) -> None:
        raise Conflict("boom", code=409, reason="Conflict")

    result = await sync_with_retry_limit(ok, WEB, num_requeues=lambda k: 0, what="service")
    assert result == Result()
    assert calls == [WEB]
    with pytest.raises(Conflict):
        await sync_with_retry_limit(
            failing, WEB, num_requeues=lambda k: MAX_SYNC_RETRIES - 1, what="service"
        )
    with pytest.raises(TerminalError) as dropped:
        await sync_with_retry_limit(
            failing, WEB, num_requeues=lambda k: MAX_SYNC_RETRIES, what="service"
        )
    assert str(dropped.value).startswith("dropping service default/web out of the queue after 15")
    with pytest.raises(TerminalError):
        await sync_with_retry_limit(
            failing, WEB, num_requeues=lambda k: 3, what="Endpoints", max_retries=3
        )
