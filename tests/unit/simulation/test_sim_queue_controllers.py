"""The simulation's queue controllers keep their queue names, one worker each and the runtime
controller's retry policy (per-key backoff from 5 ms, no overall token bucket) on
:class:`~kcm.controllerkit.QueueController`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient, ClientConfig
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey
from kcm.runtime import Controller
from kcm.simulation import CSIAttacher, CSIResizer, Provisioner, VolumesInUseReporter
from kcm.testing import FakeClock

CONTROLLERS: list[tuple[Callable[..., Any], Callable[[Any], list[Controller[ObjectKey]]]]] = [
    (Provisioner, lambda c: [c.controller]),
    (VolumesInUseReporter, lambda c: [c.controller]),
    (CSIAttacher, lambda c: [c.attacher, c.node_plugin]),
    (CSIResizer, lambda c: [c.controller]),
]
"""Each simulation controller and how to reach its runtime controllers."""

QUEUES = [
    "sim-provisioner",
    "sim-volumes-in-use",
    "sim-csi-attacher",
    "sim-csi-node",
    "sim-csi-resizer",
]


def _built(registry: CollectorRegistry | None = None) -> list[Controller[ObjectKey]]:
    client = ApiClient(ClientConfig(server="https://127.0.0.1:1"))
    factory = SharedInformerFactory(client)
    built: list[Controller[ObjectKey]] = []
    for make, controllers in CONTROLLERS:
        built += controllers(make(client, factory, clock=FakeClock(), registry=registry))
    return built


def test_the_queues_keep_their_names_and_run_one_worker() -> None:
    controllers = _built()
    assert [c.name for c in controllers] == QUEUES
    assert {c.max_concurrent_reconciles for c in controllers} == {1}


@pytest.mark.parametrize("queue", QUEUES)
def test_a_queue_backs_off_per_key_from_5_ms_without_a_token_bucket(queue: str) -> None:
    (controller,) = [c for c in _built() if c.name == queue]
    limiter = controller.queue.rate_limiter
    # client-go's default bucket (10 qps, burst 100) would delay the keys past the 100th
    assert {limiter.when(ObjectKey("", f"key-{i}")) for i in range(150)} == {0.005}
    again = [limiter.when(ObjectKey("", "key-0")) for _ in range(3)]
    assert again == pytest.approx([0.01, 0.02, 0.04])


def test_the_queues_report_their_metrics_under_their_names() -> None:
    registry = CollectorRegistry()
    for controller in _built(registry):
        controller.queue.add(ObjectKey("", "x"))
        labels = {"name": controller.name, "controller": controller.name}
        assert registry.get_sample_value("workqueue_adds_total", labels) == 1
