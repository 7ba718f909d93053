"""PodGC's pure rules: which pods count as terminated, deletion order, node state."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from kcm.controllers.podgc import OUT_OF_SERVICE_TAINT
from kcm.controllers.podgc._controller import (
    _eviction_order,
    _node_ready,
    _out_of_service,
    _terminated,
)
from kcm.models.core_v1 import Node, NodeCondition, NodeSpec, NodeStatus, Pod, PodStatus, Taint
from kcm.models.meta_v1 import ObjectMeta

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def pod(name: str, phase: str | None, age: int = 0, reason: str | None = None) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, creation_timestamp=T0 - timedelta(seconds=age)),
        status=PodStatus(phase=phase, reason=reason),
    )


def test_only_phases_other_than_pending_running_unknown_are_terminated() -> None:
    assert [p for p in ("Pending", "Running", "Unknown") if _terminated(pod("x", p))] == []
    assert _terminated(pod("x", "Succeeded"))
    assert _terminated(pod("x", "Failed"))


def test_evicted_pods_go_first_then_oldest_then_by_name() -> None:
    pods = [
        pod("b", "Failed", age=10),
        pod("a", "Failed", age=10),
        pod("old", "Succeeded", age=99),
        pod("evicted", "Failed", age=0, reason="Evicted"),
    ]
    assert [p.metadata.name for p in sorted(pods, key=_eviction_order)] == [
        "evicted",
        "old",
        "a",
        "b",
    ]


def test_node_readiness_and_out_of_service_taint() -> None:
    ready = Node(status=NodeStatus(conditions=[NodeCondition(type="Ready", status="True")]))
    unknown = Node(status=NodeStatus(conditions=[NodeCondition(type="Ready", status="Unknown")]))
    tainted = Node(spec=NodeSpec(taints=[Taint(key=OUT_OF_SERVICE_TAINT, effect="NoExecute")]))
    assert _node_ready(ready)
    assert not _node_ready(unknown)
    assert not _node_ready(Node())
    assert _out_of_service(tainted)
    assert not _out_of_service(ready)
