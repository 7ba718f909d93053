"""The kit's pod helpers (predicates, deletion ranking, pods from templates), replica status
and slow start."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import anyio
import pytest

from kcm.controllerkit import (
    POD_DELETION_COST_ANNOTATION,
    REPLICA_FAILURE,
    calculate_replica_status,
    error_text,
    is_pod_active,
    is_pod_available,
    is_pod_ready,
    pod_deletion_cost,
    pod_from_template,
    pod_name_prefix,
    pods_to_delete,
    rank_pods_for_deletion,
    slow_start_batch,
)
from kcm.errors import Forbidden
from kcm.models.apps_v1 import (
    ReplicaSet,
    ReplicaSetCondition,
    ReplicaSetSpec,
    ReplicaSetStatus,
)
from kcm.models.core_v1 import (
    Container,
    ContainerStatus,
    Pod,
    PodCondition,
    PodSpec,
    PodStatus,
    PodTemplateSpec,
)
from kcm.models.meta_v1 import ObjectMeta, OwnerReference

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def pod(
    name: str,
    *,
    node: str | None = "n1",
    phase: str | None = "Running",
    ready_since: datetime | None = None,
    not_ready: bool = False,
    cost: str | None = None,
    restarts: int = 0,
    created: datetime | None = None,
    deleting: bool = False,
    labels: dict[str, str] | None = None,
) -> Pod:
    conditions = []
    if ready_since is not None:
        conditions.append(
            PodCondition(type="Ready", status="True", last_transition_time=ready_since)
        )
    elif not_ready:
        conditions.append(PodCondition(type="Ready", status="False"))
    return Pod(
        metadata=ObjectMeta(
            name=name,
            uid=f"uid-{name}",
            labels=labels,
            annotations={POD_DELETION_COST_ANNOTATION: cost} if cost is not None else None,
            creation_timestamp=created or NOW - timedelta(hours=1),
            deletion_timestamp=NOW if deleting else None,
        ),
        spec=PodSpec(node_name=node),
        status=PodStatus(
            phase=phase,
            conditions=conditions or None,
            container_statuses=[ContainerStatus(name="c", restart_count=restarts)],
        ),
    )


def names(pods: list[Pod]) -> list[str]:
    return [str(p.metadata.name) for p in pods]


def test_active_ready_available() -> None:
    assert is_pod_active(pod("a"))
    assert not is_pod_active(pod("a", phase="Succeeded"))
    assert not is_pod_active(pod("a", phase="Failed"))
    assert not is_pod_active(pod("a", deleting=True))
    assert not is_pod_ready(pod("a"))
    assert not is_pod_ready(pod("a", not_ready=True))
    ready = pod("a", ready_since=NOW - timedelta(seconds=10))
    assert is_pod_ready(ready)
    assert is_pod_available(ready, 0, NOW)
    assert is_pod_available(ready, 9, NOW)
    assert not is_pod_available(ready, 10, NOW)  # must be strictly before now
    assert not is_pod_available(pod("b", not_ready=True), 0, NOW)


def test_deletion_cost_parsing() -> None:
    assert pod_deletion_cost(pod("a")) == 0
    assert pod_deletion_cost(pod("a", cost="-100")) == -100
    assert pod_deletion_cost(pod("a", cost="junk")) == 0
    assert pod_deletion_cost(pod("a", cost=str(2**31))) == 0


def test_rank_follows_the_kube_order() -> None:
    expected = [
        pod("unscheduled", node=None, phase="Pending"),
        pod("pending", phase="Pending"),
        pod("unknown", phase="Unknown"),
        pod("not-ready", not_ready=True, restarts=5),
        pod("not-ready-fewer-restarts", not_ready=True, restarts=1),
        pod("not-ready-old", not_ready=True, created=NOW - timedelta(days=30)),
        pod("ready-cheap", ready_since=NOW - timedelta(days=3), cost="-100"),
        pod("ready-recent", ready_since=NOW - timedelta(seconds=10)),
        pod("ready-long", ready_since=NOW - timedelta(days=3)),
        pod("ready-costly", ready_since=NOW - timedelta(seconds=1), cost="100"),
    ]
    shuffled = list(expected)
    for seed in range(5):
        random.Random(seed).shuffle(shuffled)
        assert names(rank_pods_for_deletion(shuffled, now=NOW)) == names(expected)


def test_pods_doubled_up_on_a_node_go_first() -> None:
    a = pod("a", node="busy", ready_since=NOW - timedelta(days=1))
    b = pod("b", node="quiet", ready_since=NOW - timedelta(days=1))
    related = [a, pod("sibling-1", node="busy"), pod("sibling-2", node="busy"), b]
    assert names(rank_pods_for_deletion([b, a], related, now=NOW)) == ["a", "b"]


def test_ready_times_in_the_same_log_bucket_tie_break_by_uid() -> None:
    # 1000 s and 1001 s ago are in the same log2 bucket: the UID decides, not the age.
    x = pod("x", ready_since=NOW - timedelta(seconds=1000))
    y = pod("y", ready_since=NOW - timedelta(seconds=1001))
    assert names(rank_pods_for_deletion([y, x], now=NOW)) == ["x", "y"]
    assert names(rank_pods_for_deletion([x, y], now=NOW)) == ["x", "y"]
    # Without "now" times compare exactly: the more recently ready first.
    assert names(rank_pods_for_deletion([y, x])) == ["x", "y"]
    old = pod("old", ready_since=NOW - timedelta(seconds=1001))
    new = pod("new", ready_since=NOW - timedelta(seconds=1000))
    assert names(rank_pods_for_deletion([old, new])) == ["new", "old"]


def test_newer_pods_first_and_restarts_before_age() -> None:
    young = pod("young", created=NOW - timedelta(minutes=1))
    old = pod("old", created=NOW - timedelta(days=10))
    assert names(rank_pods_for_deletion([old, young], now=NOW)) == ["young", "old"]
    crashy_old = pod("crashy-old", created=NOW - timedelta(days=10), restarts=3)
    assert names(rank_pods_for_deletion([young, crashy_old], now=NOW)) == [
        "crashy-old",
        "young",
    ]


def test_pods_to_delete_takes_the_first_ranked() -> None:
    pods = [pod("ready", ready_since=NOW), pod("pending", phase="Pending")]
    assert names(pods_to_delete(pods, [], 1, now=NOW)) == ["pending"]
    assert names(pods_to_delete(pods, [], 2, now=NOW)) == ["ready", "pending"]


def test_pod_from_template() -> None:
    ref = OwnerReference(
        api_version="apps/v1", kind="ReplicaSet", name="web", uid="u", controller=True
    )
    template = PodTemplateSpec(
        metadata=ObjectMeta(
            labels={"app": "web"}, annotations={"a": "1"}, finalizers=["x/y"], name="ignored"
        ),
        spec=PodSpec(containers=[Container(name="c", image="nginx")]),
    )
    created = pod_from_template(template, "web", ref)
    assert created.metadata.generate_name == "web-"
    assert created.metadata.name is None
    assert created.metadata.labels == {"app": "web"}
    assert created.metadata.annotations == {"a": "1"}
    assert created.metadata.finalizers == ["x/y"]
    assert created.metadata.owner_references == [ref]
    assert created.spec == template.spec
    with pytest.raises(ValueError, match="no labels"):
        pod_from_template(PodTemplateSpec(spec=template.spec), "web", ref)


def test_pod_name_prefix_falls_back_to_the_name() -> None:
    assert pod_name_prefix("web") == "web-"
    assert pod_name_prefix("Web") == "Web"  # not a valid prefix: kube uses the name alone
    assert pod_name_prefix("a" * 253) == "a" * 253


def rs(replicas: int, *, conditions: list[ReplicaSetCondition] | None = None) -> ReplicaSet:
    return ReplicaSet(
        metadata=ObjectMeta(name="web", generation=2),
        spec=ReplicaSetSpec(
            replicas=replicas,
            min_ready_seconds=5,
            template=PodTemplateSpec(metadata=ObjectMeta(labels={"app": "web", "v": "2"})),
        ),
        status=ReplicaSetStatus(conditions=conditions, observed_generation=1),
    )


def status(owner: ReplicaSet, pods: list[Pod], error: Exception | None) -> ReplicaSetStatus:
    result: ReplicaSetStatus = calculate_replica_status(
        owner,
        pods,
        error,
        now=NOW,
        status_type=ReplicaSetStatus,
        condition_type=ReplicaSetCondition,
    )
    return result


def test_status_counts() -> None:
    pods = [
        pod("full", labels={"app": "web", "v": "2"}, ready_since=NOW - timedelta(seconds=60)),
        pod("partial", labels={"app": "web"}, ready_since=NOW - timedelta(seconds=2)),
        pod("pending", labels={"app": "web", "v": "2"}, phase="Pending"),
    ]
    s = status(rs(3), pods, None)
    assert (s.replicas, s.fully_labeled_replicas, s.ready_replicas, s.available_replicas) == (
        3,
        2,
        2,
        1,
    )
    assert s.observed_generation == 1  # the caller sets it when writing
    assert s.conditions is None


def test_replica_failure_condition_added_kept_and_removed() -> None:
    failed = status(rs(3), [], RuntimeError("quota"))
    [cond] = failed.conditions or []
    assert (cond.type, cond.status, cond.reason, cond.message) == (
        REPLICA_FAILURE,
        "True",
        "FailedCreate",
        "quota",
    )
    assert cond.last_transition_time == NOW
    too_many = status(rs(0), [pod("a")], RuntimeError("nope"))
    assert [c.reason for c in too_many.conditions or []] == ["FailedDelete"]
    # An existing condition is kept as is while errors continue, removed after success.
    again = status(rs(3, conditions=failed.conditions), [], RuntimeError("other"))
    assert again.conditions == failed.conditions
    healed = status(rs(3, conditions=failed.conditions), [], None)
    assert healed.conditions is None


@pytest.mark.anyio
async def test_slow_start_batches_double_and_stop_at_the_first_failing_batch() -> None:
    completed_at_start: list[int] = []
    completed = 0

    async def fn() -> None:
        nonlocal completed
        index = len(completed_at_start)
        completed_at_start.append(completed)
        await anyio.lowlevel.checkpoint()
        completed += 1
        if index == 4:
            raise RuntimeError("boom")

    successes, error = await slow_start_batch(10, fn)
    # Batches of 1, 2 and 4 (each starting once the previous one finished); the third batch
    # had the failure, so the remaining 3 calls are never made.
    assert completed_at_start == [0, 1, 1, 3, 3, 3, 3]
    assert successes == 6
    assert isinstance(error, RuntimeError)
    assert await slow_start_batch(0, fn) == (0, None)
    assert await slow_start_batch(10, lambda: anyio.lowlevel.checkpoint()) == (10, None)


def test_error_text_is_the_status_message_alone_as_go_prints_an_api_error() -> None:
    forbidden = Forbidden('pods "web-x" is forbidden: exceeded quota: q', reason="Forbidden")
    assert str(forbidden).startswith("403 Forbidden: ")  # kcm's own str() keeps code and reason
    assert error_text(forbidden) == 'pods "web-x" is forbidden: exceeded quota: q'
    assert error_text(TimeoutError("timed out")) == "timed out"
