"""Controller.run(): a cache-sync timeout is a typed CacheSyncTimeoutError naming the kinds."""

from __future__ import annotations

from typing import Any, cast

import anyio
import pytest

from kcm.errors import CacheSyncTimeoutError, Forbidden, KcmError
from kcm.informers import HandlerRegistration, SharedIndexInformer
from kcm.models import ObjectKey
from kcm.runtime import Controller, Request, Result
from kcm.testing import FakeClock

pytestmark = pytest.mark.anyio


class _Registration:
    def __init__(self, synced: bool = False) -> None:
        self.has_synced = synced
        self.event = anyio.Event()

    async def wait_synced(self) -> None:
        await self.event.wait()


class _Informer:
    def __init__(self, last_error: Exception | None) -> None:
        self.last_error = last_error


class _Never:
    async def reconcile(self, request: Request) -> Result:
        raise AssertionError("no reconcile before the caches sync")


def _reg(r: _Registration) -> HandlerRegistration:
    return cast(HandlerRegistration, r)


def _inf(i: _Informer) -> SharedIndexInformer[Any]:
    return cast(SharedIndexInformer[Any], i)


async def _run(controller: Controller[ObjectKey], caught: list[CacheSyncTimeoutError]) -> None:
    """Run ``controller``, keeping the CacheSyncTimeoutError it fails with."""
    try:
        await controller.run()
    except CacheSyncTimeoutError as exc:
        caught.append(exc)


async def test_timeout_is_typed_and_names_controller_and_unsynced_kinds() -> None:
    clock = FakeClock()
    controller: Controller[ObjectKey] = Controller(
        "widgets", _Never(), clock=clock, cache_sync_timeout=30
    )
    pods, synced, nodes = _Registration(), _Registration(synced=True), _Registration()
    forbidden = Forbidden('pods is forbidden: User "kcm" cannot list resource "pods"')
    controller.wait_for([_reg(pods)], kind="Pod", informer=_inf(_Informer(forbidden)))
    controller.wait_for([_reg(synced)], kind="ConfigMap")
    controller.wait_for([_reg(nodes)], kind="Node (metadata-only)")
    caught: list[CacheSyncTimeoutError] = []

    async with anyio.create_task_group() as tg:
        tg.start_soon(_run, controller, caught)
        await clock.advance(29.9)
        assert caught == []  # not yet
        await clock.advance(0.1)
    [error] = caught
    assert isinstance(error, CacheSyncTimeoutError)
    assert isinstance(error, TimeoutError)  # existing `except TimeoutError` keeps working
    assert isinstance(error, KcmError)
    assert error.controller == "widgets"
    assert error.kinds == ("Pod", "Node (metadata-only)")  # not ConfigMap: it synced
    assert error.timeout == 30
    message = str(error)
    assert "'widgets'" in message
    assert "Pod, Node (metadata-only) did not sync within 30 s" in message
    assert "cannot list resource" in message  # the informer's last error
    assert "RBAC" in message
    assert "cache_sync_timeout" in message


async def test_kind_defaults_to_informer_number_and_later_sync_is_not_named() -> None:
    clock = FakeClock()
    controller: Controller[ObjectKey] = Controller(
        "c", _Never(), clock=clock, cache_sync_timeout=10
    )
    first, second = _Registration(), _Registration()
    controller.wait_for([_reg(first), _reg(second)])
    caught: list[CacheSyncTimeoutError] = []

    async with anyio.create_task_group() as tg:
        tg.start_soon(_run, controller, caught)
        await clock.advance(5)
        first.has_synced = True
        first.event.set()
        await clock.advance(5)
    [error] = caught
    assert error.kinds == ("informer #2",)
    assert "caches of informer #2 did not sync" in str(error)
