"""Pure rules of the node lifecycle controller: health, zones, tainting rate, tolerations."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kcm.controllers.nodelifecycle import ZoneState, assess, compute_zone_state, zone_key
from kcm.controllers.nodelifecycle._rate_limited_queue import RateLimitedTimedQueue
from kcm.controllers.nodelifecycle._taints import (
    condition_taint_diff,
    label_updates,
    matching_tolerations,
    min_toleration_seconds,
    swap_taints,
)
from kcm.controllers.nodelifecycle._zones import zone_rate
from kcm.models import Node, NodeCondition, NodeSpec, NodeStatus, ObjectMeta, Taint, Toleration
from kcm.testing import FakeClock

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _ready(status: str | None) -> NodeCondition | None:
    return None if status is None else NodeCondition(type="Ready", status=status)


@pytest.mark.parametrize(
    ("statuses", "state"),
    [
        (["True", "True"], ZoneState.NORMAL),
        (["False"], ZoneState.FULL_DISRUPTION),
        ([None, "Unknown"], ZoneState.FULL_DISRUPTION),
        (["True", "False", "False"], ZoneState.NORMAL),  # 2 down: never partial
        (["True", "False", "False", "Unknown"], ZoneState.PARTIAL_DISRUPTION),  # 3/4
        (["True", "True", "True", "False", "False", "False"], ZoneState.NORMAL),  # 0.5
    ],
)
def test_zone_state(statuses: list[str | None], state: ZoneState) -> None:
    assert compute_zone_state([_ready(s) for s in statuses], 0.55)[1] is state


def test_zone_rate_by_state_and_size() -> None:
    rates = {"eviction_rate": 0.1, "secondary_eviction_rate": 0.01, "large_cluster_threshold": 50}
    assert zone_rate(ZoneState.NORMAL, 3, **rates) == 0.1
    assert zone_rate(ZoneState.FULL_DISRUPTION, 3, **rates) == 0.1
    assert zone_rate(ZoneState.PARTIAL_DISRUPTION, 50, **rates) == 0.0
    assert zone_rate(ZoneState.PARTIAL_DISRUPTION, 51, **rates) == 0.01


def test_zone_key_from_topology_labels() -> None:
    assert zone_key(Node(metadata=ObjectMeta(name="n"))) == ""
    labels = {"topology.kubernetes.io/region": "r", "failure-domain.beta.kubernetes.io/zone": "z"}
    assert zone_key(Node(metadata=ObjectMeta(name="n", labels=labels))) == "r:\x00:z"


@pytest.mark.anyio
async def test_the_queue_takes_one_node_per_token_in_order() -> None:
    clock = FakeClock()
    queue = RateLimitedTimedQueue(0.1, clock)
    done: list[str] = []

    async def taint(name: str, uid: str) -> tuple[bool, float]:
        done.append(name)
        return True, 0.0

    assert queue.add("a", "1")
    assert queue.add("b", "2")
    assert not queue.add("a", "1")
    await queue.try_process(taint)
    assert done == ["a"]  # the bucket starts with one token
    await clock.advance(9.9)
    await queue.try_process(taint)
    assert done == ["a"]
    await clock.advance(0.1)
    await queue.try_process(taint)
    assert done == ["a", "b"]
    assert not queue.add("a", "1")  # processed, still known until removed
    assert queue.remove("a")
    assert queue.add("a", "1")
    queue.swap_limiter(0.0)
    await clock.advance(100)
    await queue.try_process(taint)
    assert done == ["a", "b"]


@pytest.mark.anyio
async def test_a_failed_node_is_retried_later() -> None:
    clock = FakeClock()
    queue = RateLimitedTimedQueue(100.0, clock)
    calls: list[str] = []

    async def fail(name: str, uid: str) -> tuple[bool, float]:
        calls.append(name)
        return False, 1.0

    queue.add("a", "1")
    await queue.try_process(fail)
    await clock.advance(0.5)
    await queue.try_process(fail)
    assert calls == ["a"]
    assert "a" in queue
    await clock.advance(0.6)
    await queue.try_process(fail)
    assert calls == ["a", "a"]


def _tol(key: str | None, seconds: int | None, effect: str | None = "NoExecute") -> Toleration:
    return Toleration(key=key, operator="Exists", effect=effect, toleration_seconds=seconds)


def test_toleration_arithmetic() -> None:
    unreachable = Taint(key="node.kubernetes.io/unreachable", effect="NoExecute")
    other = Taint(key="x", effect="NoExecute")
    assert matching_tolerations([unreachable], []) == (False, [])
    ok, used = matching_tolerations([unreachable], [_tol("node.kubernetes.io/unreachable", 300)])
    assert ok
    assert min_toleration_seconds(used) == 300
    assert not matching_tolerations([unreachable, other], [_tol(unreachable.key, 1)])[0]
    assert min_toleration_seconds([_tol("a", None)]) == -1  # for ever
    assert min_toleration_seconds([_tol("a", None), _tol("b", 30)]) == 30
    assert min_toleration_seconds([_tol("a", 30), _tol("b", -5)]) == 0
    assert min_toleration_seconds([]) == 0


def _node(conditions: dict[str, str], taints: list[Taint] | None = None, **spec: object) -> Node:
    return Node(
        metadata=ObjectMeta(name="n", labels={"kubernetes.io/os": "linux"}),
        spec=NodeSpec(taints=taints, **spec),  # type: ignore[arg-type]
        status=NodeStatus(
            conditions=[NodeCondition(type=k, status=v) for k, v in conditions.items()]
        ),
    )


def test_condition_taints() -> None:
    node = _node(
        {"Ready": "Unknown", "MemoryPressure": "True", "DiskPressure": "False"},
        taints=[
            Taint(key="node.kubernetes.io/not-ready", effect="NoSchedule"),
            Taint(key="node.kubernetes.io/not-ready", effect="NoExecute"),
            Taint(key="mine", effect="NoSchedule"),
        ],
        unschedulable=True,
    )
    add, remove = condition_taint_diff(node)
    assert {t.key for t in add} == {
        "node.kubernetes.io/unreachable",
        "node.kubernetes.io/memory-pressure",
        "node.kubernetes.io/unschedulable",
    }
    assert [(t.key, t.effect) for t in remove] == [("node.kubernetes.io/not-ready", "NoSchedule")]
    assert label_updates(node) == {"beta.kubernetes.io/os": "linux"}


def test_swap_taints_stamps_added_ones_and_keeps_others() -> None:
    mine = Taint(key="mine", effect="NoSchedule")
    unreachable = Taint(key="node.kubernetes.io/unreachable", effect="NoExecute")
    swapped = swap_taints(
        [mine, unreachable], [Taint(key="nr", effect="NoExecute")], [unreachable], T0
    )
    assert swapped == [mine, Taint(key="nr", effect="NoExecute", time_added=T0)]
    assert swap_taints([mine], [mine], [], T0) is None


def _heartbeat(node: Node, at: datetime, status: str = "True") -> Node:
    ready = NodeCondition(
        type="Ready", status=status, last_heartbeat_time=at, last_transition_time=T0
    )
    return Node(metadata=node.metadata, status=NodeStatus(conditions=[ready]))


GRACE = {"monitor_grace_period": 40.0, "startup_grace_period": 60.0}


def test_a_silent_node_goes_unknown_after_the_grace_period() -> None:
    node = _heartbeat(Node(metadata=ObjectMeta(name="n", creation_timestamp=T0)), T0)
    first = assess(node, None, None, T0, **GRACE)
    assert first.new_status is None
    assert first.health.probe_timestamp == T0
    later = T0 + timedelta(seconds=40)
    assert assess(node, first.health, None, later, **GRACE).new_status is None
    late = assess(node, first.health, None, later + timedelta(seconds=1), **GRACE)
    assert late.observed_ready.status == "True"
    assert late.current_ready is not None
    assert late.current_ready.status == "Unknown"
    assert late.current_ready.message == "Kubelet stopped posting node status."
    assert late.new_status is not None
    kinds = {c.type: c.reason for c in late.new_status.conditions or ()}
    assert kinds == {
        "Ready": "NodeStatusUnknown",
        "MemoryPressure": "NodeStatusNeverUpdated",
        "DiskPressure": "NodeStatusNeverUpdated",
        "PIDPressure": "NodeStatusNeverUpdated",
    }


def test_a_renewed_lease_or_a_new_heartbeat_keeps_a_node_alive() -> None:
    node = _heartbeat(Node(metadata=ObjectMeta(name="n", creation_timestamp=T0)), T0)
    health = assess(node, None, T0, T0, **GRACE).health
    at = T0 + timedelta(seconds=30)
    health = assess(node, health, at, at, **GRACE).health  # lease renewed
    assert health.probe_timestamp == at
    at2 = T0 + timedelta(seconds=60)
    fresh = _heartbeat(node, at2)
    health = assess(fresh, health, at, at2, **GRACE).health  # heartbeat changed
    assert health.probe_timestamp == at2
    assert assess(fresh, health, at, at2 + timedelta(seconds=40), **GRACE).new_status is None


def test_a_node_without_status_has_the_startup_grace_from_its_creation() -> None:
    node = Node(metadata=ObjectMeta(name="n", creation_timestamp=T0))
    early = assess(node, None, None, T0 + timedelta(seconds=60), **GRACE)
    assert early.new_status is None
    assert early.current_ready is None
    late = assess(node, early.health, None, T0 + timedelta(seconds=61), **GRACE)
    assert late.current_ready is not None
    assert late.current_ready.reason == "NodeStatusNeverUpdated"
