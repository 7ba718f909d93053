"""ControllerBase: the common options kept and shown read-only, with the class's workers,
and the runtime controller built from them."""

from __future__ import annotations

from typing import Unpack, final

import pytest
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient, ClientConfig
from kcm.clock import SYSTEM_CLOCK
from kcm.controllerkit import ControllerBase, ControllerOptions
from kcm.runtime import ReconcileFunc, Result
from kcm.testing import FakeClock, FakeRecorder
from kcm.workqueue import RateLimiter, default_controller_rate_limiter


@final
class _Mine(ControllerBase):
    default_workers = 5

    def __init__(self, client: ApiClient, *, extra: int = 0, **options: Unpack[ControllerOptions]):
        super().__init__(client, **options)
        self.extra = extra


def _client() -> ApiClient:
    return ApiClient(ClientConfig(server="https://127.0.0.1:1"))


def test_the_options_given_are_kept_and_shown() -> None:
    client, recorder, clock, registry = _client(), FakeRecorder(), FakeClock(), CollectorRegistry()
    mine = _Mine(client, extra=2, recorder=recorder, clock=clock, workers=3, registry=registry)
    assert (mine.client, mine.recorder, mine.clock) == (client, recorder, clock)
    assert (mine._workers, mine._registry, mine.extra) == (3, registry, 2)
    assert repr(mine) == "<_Mine workers=3>"


def test_the_defaults_are_the_system_clock_no_registry_and_the_class_workers() -> None:
    mine = _Mine(_client(), recorder=FakeRecorder())
    assert (mine.clock, mine._registry, mine._workers) == (SYSTEM_CLOCK, None, 5)
    assert ControllerBase(_client(), recorder=FakeRecorder())._workers == 1


def test_the_options_are_read_only() -> None:
    mine = _Mine(_client(), recorder=FakeRecorder())
    with pytest.raises(AttributeError):
        mine.clock = FakeClock()  # type: ignore[misc]


def test_new_controller_runs_the_workers_on_the_clock_into_the_registry() -> None:
    clock, registry = FakeClock(), CollectorRegistry()
    mine = _Mine(_client(), recorder=FakeRecorder(), clock=clock, workers=3, registry=registry)

    async def reconcile(key: str) -> Result:
        return Result()

    limiter: RateLimiter[str] = default_controller_rate_limiter(clock=clock)
    controller = mine.new_controller("mine", ReconcileFunc(reconcile), rate_limiter=limiter)
    assert (controller.name, controller.max_concurrent_reconciles) == ("mine", 3)
    assert controller.queue.rate_limiter is limiter
    assert registry.get_sample_value("workqueue_depth", {"name": "mine", "controller": "mine"}) == 0
