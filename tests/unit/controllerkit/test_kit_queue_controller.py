"""QueueController: the common options reach the runtime controller, watched informers queue
keys that the subclass reconciles, and the certificate controllers' queue backs off from
200 ms."""

from __future__ import annotations

from typing import Any, Unpack, cast, final

import anyio
import pytest
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient
from kcm.controllerkit import QueueController, QueueControllerOptions, certificate_rate_limiter
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey
from kcm.models.core_v1 import Pod
from kcm.models.meta_v1 import ObjectMeta
from kcm.runtime import EnqueueForObject, Result
from kcm.testing import FakeClock, FakeRecorder
from kcm.workqueue import RateLimiter

pytestmark = pytest.mark.anyio

CLIENT = cast(ApiClient, object())
FACTORY = cast(SharedInformerFactory, object())
KEY = ObjectKey("default", "web")


@final
class _Recording(QueueController):
    queue_name = "recording"
    default_workers = 3

    def __init__(self, *, marker: str = "", **options: Unpack[QueueControllerOptions]) -> None:
        self.marker = marker  # an option of its own, kept before the informers are watched
        self.seen: list[ObjectKey] = []
        super().__init__(CLIENT, FACTORY, **options)

    def watch_informers(self, factory: SharedInformerFactory) -> None:
        self.watched = (factory, self.marker)

    async def reconcile(self, request: ObjectKey) -> Result:
        self.seen.append(request)
        return Result()


@final
class _Certificates(QueueController):
    queue_name = "certificates"
    fixed_workers = 1

    def watch_informers(self, factory: SharedInformerFactory) -> None:
        pass

    def rate_limiter(self, clock: Any) -> RateLimiter[ObjectKey]:
        return certificate_rate_limiter(clock)

    async def reconcile(self, request: ObjectKey) -> Result:
        return Result()


def test_the_common_options_are_kept_and_passed_to_the_runtime_controller() -> None:
    clock, recorder = FakeClock(), FakeRecorder()
    controller = _Recording(marker="own", clock=clock, recorder=recorder, workers=2)
    assert controller.watched == (FACTORY, "own")
    assert controller._client is CLIENT
    assert controller._clock is clock
    assert controller._recorder is recorder
    assert controller.controller.name == "recording"
    assert controller.controller.max_concurrent_reconciles == 2
    assert repr(controller) == "<_Recording>"


def test_without_workers_the_class_default_is_used() -> None:
    controller = _Recording()
    assert controller.controller.max_concurrent_reconciles == 3
    assert controller._recorder is None


def test_the_queue_name_labels_the_metrics() -> None:
    registry = CollectorRegistry()
    _Recording(registry=registry)
    assert (
        registry.get_sample_value(
            "workqueue_depth", {"name": "recording", "controller": "recording"}
        )
        == 0
    )


def test_fixed_workers_win_over_the_workers_option() -> None:
    controller = _Certificates(CLIENT, FACTORY, workers=4)
    assert controller.controller.max_concurrent_reconciles == 1


def test_a_bad_worker_count_is_refused() -> None:
    with pytest.raises(ValueError, match="max_concurrent_reconciles"):
        _Recording(workers=0)


async def test_a_queued_key_is_reconciled_by_the_subclass() -> None:
    controller = _Recording(clock=FakeClock())
    async with anyio.create_task_group() as tg:
        await tg.start(controller.run)
        controller.controller.enqueue(KEY)
        await controller.controller.wait_idle()
        tg.cancel_scope.cancel()
    assert controller.seen == [KEY]


def test_the_default_queue_backs_off_from_5_ms_the_certificate_queue_from_200_ms() -> None:
    default = _Recording(clock=FakeClock()).controller.queue.rate_limiter
    certificates = _Certificates(CLIENT, FACTORY, clock=FakeClock()).controller.queue.rate_limiter
    assert default.when(KEY) == pytest.approx(0.005)
    assert certificates.when(KEY) == pytest.approx(0.2)
    assert certificates.when(KEY) == pytest.approx(0.4)


class _Informer:
    """Just what ``watch`` uses of an informer: its handlers and its lister."""

    def __init__(self) -> None:
        self.handlers: list[Any] = []
        self.cache = object()

    def add_event_handler(self, handler: Any) -> object:
        self.handlers.append(handler)
        return object()

    def lister(self) -> object:
        return self.cache


@final
class _Watching(QueueController):
    queue_name = "watching"

    def watch_informers(self, factory: SharedInformerFactory) -> None:
        self.informer = _Informer()
        self.pods = self.watch(cast(Any, self.informer), EnqueueForObject(), kind="Pod")

    async def reconcile(self, request: ObjectKey) -> Result:
        return Result()


def test_watch_queues_the_keys_of_the_handler_and_returns_the_lister() -> None:
    controller = _Watching(CLIENT, FACTORY)
    assert controller.pods is controller.informer.cache
    [handler] = controller.informer.handlers
    pod = Pod(metadata=ObjectMeta(name="web", namespace="default"))
    handler.on_add(pod, is_in_initial_list=False)
    assert len(controller.controller.queue) == 1
