"""One pass over a StatefulSet's pods (Go's ``updateStatefulSet``), with the writes recorded
instead of made: creation order, waiting, failed pods, identity repair, scale down, rolling
updates with a partition, OnDelete, and the status the pass counts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import anyio
import msgspec
import pytest

from kcm.controllers.statefulset import POD_NAME_LABEL, REVISION_LABEL
from kcm.controllers.statefulset._replicas import Revisions, update_replicas
from kcm.controllers.statefulset._status import SetStatus
from kcm.models.apps_v1 import (
    RollingUpdateStatefulSetStrategy,
    StatefulSet,
    StatefulSetSpec,
    StatefulSetUpdateStrategy,
)
from kcm.models.core_v1 import Container, Pod, PodCondition, PodSpec, PodStatus, PodTemplateSpec
from kcm.models.meta_v1 import LabelSelector, ObjectMeta, OwnerReference

NOW = datetime(2026, 1, 1, tzinfo=UTC)
REF = OwnerReference(
    api_version="apps/v1", kind="StatefulSet", name="web", uid="u", controller=True
)


class Recorder:
    """The writes a pass makes, as ``"create web-0@rev"``, ``"delete web-1"``, ..."""

    def __init__(self, fail: str | None = None) -> None:
        self.calls: list[str] = []
        self.images: dict[str, str] = {}
        self._fail = fail

    def _do(self, call: str) -> None:
        self.calls.append(call)
        if call == self._fail:
            raise RuntimeError(f"{call} failed")

    async def create_pod(self, sts: StatefulSet, pod: Pod) -> None:
        labels = pod.metadata.labels or {}
        assert pod.spec is not None
        assert pod.spec.containers
        self.images[str(pod.metadata.name)] = str(pod.spec.containers[0].image)
        self._do(f"create {pod.metadata.name}@{labels.get(REVISION_LABEL)}")

    async def delete_pod(self, sts: StatefulSet, pod: Pod) -> None:
        self._do(f"delete {pod.metadata.name}")

    async def update_pod(self, sts: StatefulSet, pod: Pod) -> None:
        assert sts.spec is not None
        assert sts.spec.template is not None
        self._do(f"update {pod.metadata.name}")

    def recreating_failed_pod(self, sts: StatefulSet, pod: Pod) -> None:
        self.calls.append(f"event RecreatingFailedPod {pod.metadata.name}")


def stateful_set(
    replicas: int = 3,
    *,
    policy: str | None = None,
    strategy: str | None = None,
    partition: int | None = None,
    min_ready: int | None = None,
    deleting: bool = False,
) -> StatefulSet:
    update = None
    if strategy or partition is not None:
        rolling = None
        if partition is not None:
            rolling = RollingUpdateStatefulSetStrategy(partition=partition)
        update = StatefulSetUpdateStrategy(type=strategy or "RollingUpdate", rolling_update=rolling)
    return StatefulSet(
        metadata=ObjectMeta(
            name="web",
            namespace="ns",
            uid="u",
            generation=2,
            deletion_timestamp=NOW if deleting else None,
        ),
        spec=StatefulSetSpec(
            replicas=replicas,
            service_name="web",
            selector=LabelSelector(match_labels={"app": "web"}),
            template=template("nginx:2"),
            pod_management_policy=policy,
            update_strategy=update,
            min_ready_seconds=min_ready,
        ),
    )


def template(image: str) -> PodTemplateSpec:
    return PodTemplateSpec(
        metadata=ObjectMeta(labels={"app": "web"}),
        spec=PodSpec(containers=[Container(name="c", image=image)]),
    )


def revisions(sts: StatefulSet) -> Revisions:
    assert sts.spec is not None
    old = msgspec.structs.replace(sts.spec, template=template("nginx:1"))
    return Revisions(
        current="web-old",
        update="web-new",
        current_set=msgspec.structs.replace(sts, spec=old),
        update_set=sts,
        controller_ref=REF,
    )


def pod(
    ordinal: int,
    *,
    phase: str = "Running",
    ready: bool = True,
    revision: str = "web-new",
    deleting: bool = False,
    ready_for: float = 3600,
    labelled: bool = True,
) -> Pod:
    name = f"web-{ordinal}"
    labels = {"app": "web", REVISION_LABEL: revision}
    if labelled:
        labels[POD_NAME_LABEL] = name
    since = NOW - timedelta(seconds=ready_for)
    condition = PodCondition(
        type="Ready", status="True" if ready else "False", last_transition_time=since
    )
    return Pod(
        metadata=ObjectMeta(
            name=name,
            namespace="ns",
            labels=labels,
            deletion_timestamp=NOW if deleting else None,
        ),
        status=PodStatus(phase=phase, conditions=[condition]),
    )


def run(sts: StatefulSet, pods: list[Pod], fail: str | None = None) -> tuple[list[str], SetStatus]:
    recorder = Recorder(fail)

    async def go() -> SetStatus:
        return await update_replicas(sts, revisions(sts), 0, pods, recorder, now=NOW)

    status = anyio.run(go)
    return recorder.calls, status


def test_ordered_creates_the_lowest_missing_ordinal_and_stops() -> None:
    calls, status = run(stateful_set(), [])
    assert calls == ["create web-0@web-new"]
    assert (status.replicas, status.updated_replicas, status.current_replicas) == (1, 1, 0)


@pytest.mark.parametrize(
    "first",
    [
        pod(0, phase="Pending", ready=False),
        pod(0, ready=False),
        pod(0, deleting=True),
    ],
    ids=["pending", "not-ready", "terminating"],
)
def test_ordered_waits_for_the_pod_before(first: Pod) -> None:
    calls, _ = run(stateful_set(), [first])
    assert calls == []


def test_ordered_waits_for_min_ready_seconds() -> None:
    calls, status = run(stateful_set(min_ready=30), [pod(0, ready_for=10)])
    assert calls == []
    assert (status.ready_replicas, status.available_replicas) == (1, 0)
    calls, status = run(stateful_set(min_ready=30), [pod(0, ready_for=31)])
    assert calls == ["create web-1@web-new"]
    assert status.available_replicas == 1


def test_ordered_creates_the_next_once_the_ones_before_are_healthy() -> None:
    calls, _ = run(stateful_set(), [pod(0), pod(2)])
    assert calls == ["create web-1@web-new"]


def test_parallel_creates_every_missing_pod_whatever_the_others_do() -> None:
    calls, status = run(stateful_set(policy="Parallel"), [pod(1, phase="Pending", ready=False)])
    assert calls == ["create web-0@web-new", "create web-2@web-new"]
    assert status.replicas == 3


def test_a_failed_pod_is_deleted_and_created_again() -> None:
    calls, status = run(stateful_set(), [pod(0), pod(1, phase="Failed", ready=False), pod(2)])
    assert calls == [
        "event RecreatingFailedPod web-1",
        "delete web-1",
        "create web-1@web-new",
    ]
    assert status.replicas == 3


def test_a_pod_whose_identity_drifted_is_updated() -> None:
    calls, _ = run(stateful_set(replicas=2), [pod(0, labelled=False), pod(1)])
    assert calls == ["update web-0"]


def test_ordered_scale_down_deletes_the_highest_ordinal_only() -> None:
    calls, status = run(stateful_set(replicas=1), [pod(0), pod(1), pod(2)])
    assert calls == ["delete web-2"]
    assert status.replicas == 3  # the deleted pod is still there until the informer says so
    assert status.updated_replicas == 2


def test_parallel_scale_down_deletes_every_condemned_pod() -> None:
    calls, _ = run(stateful_set(replicas=1, policy="Parallel"), [pod(0), pod(1), pod(2)])
    assert calls == ["delete web-2", "delete web-1"]


def test_scale_down_waits_while_a_remaining_pod_is_unhealthy() -> None:
    calls, _ = run(stateful_set(replicas=2), [pod(0), pod(1, ready=False), pod(2)])
    assert calls == []


def test_scale_down_waits_for_a_terminating_pod_when_ordered() -> None:
    pods = [pod(0), pod(1), pod(2, deleting=True)]
    assert run(stateful_set(replicas=1), pods)[0] == []
    assert run(stateful_set(replicas=1, policy="Parallel"), pods)[0] == ["delete web-1"]


def test_the_first_unhealthy_pod_may_itself_be_scaled_away() -> None:
    # Both condemned pods are unhealthy; web-1 is the first: web-2 waits for it.
    calls, _ = run(stateful_set(replicas=1), [pod(0), pod(1, ready=False), pod(2, ready=False)])
    assert calls == []
    # web-2 is the first (and only) unhealthy pod: removing it is allowed.
    calls, _ = run(stateful_set(replicas=1), [pod(0), pod(1), pod(2, ready=False)])
    assert calls == ["delete web-2"]


def test_rolling_update_replaces_the_highest_ordinal_first_one_at_a_time() -> None:
    pods = [pod(i, revision="web-old") for i in range(3)]
    calls, status = run(stateful_set(), pods)
    assert calls == ["delete web-2"]
    assert status.current_replicas == 2
    calls, _ = run(stateful_set(), [pod(0, revision="web-old"), pod(1, revision="web-old")])
    assert calls == ["create web-2@web-new"]
    calls, _ = run(stateful_set(), [*pods[:2], pod(2, phase="Pending", ready=False)])
    assert calls == []  # waits for the new web-2


def test_rolling_update_stops_at_the_partition() -> None:
    pods = [pod(0, revision="web-old"), pod(1, revision="web-old"), pod(2)]
    assert run(stateful_set(partition=2), pods)[0] == []
    assert run(stateful_set(partition=1), pods)[0] == ["delete web-1"]


def test_pods_below_the_partition_are_created_at_the_current_revision() -> None:
    recorder = Recorder()
    sts = stateful_set(partition=2, policy="Parallel")

    async def go() -> SetStatus:
        return await update_replicas(sts, revisions(sts), 0, [], recorder, now=NOW)

    status = anyio.run(go)
    assert recorder.calls == [
        "create web-0@web-old",
        "create web-1@web-old",
        "create web-2@web-new",
    ]
    assert recorder.images == {"web-0": "nginx:1", "web-1": "nginx:1", "web-2": "nginx:2"}
    assert (status.current_replicas, status.updated_replicas) == (2, 1)


def test_on_delete_replaces_nothing() -> None:
    pods = [pod(i, revision="web-old") for i in range(3)]
    assert run(stateful_set(strategy="OnDelete"), pods)[0] == []
    # a deleted pod comes back at the update revision, whatever its ordinal
    calls, _ = run(stateful_set(strategy="OnDelete"), pods[1:])
    assert calls == ["create web-0@web-new"]


def test_a_deleting_set_only_counts() -> None:
    calls, status = run(stateful_set(deleting=True), [pod(0), pod(5)])
    assert calls == []
    assert (status.replicas, status.ready_replicas) == (2, 2)


def test_the_status_counts_pods_by_state_and_revision() -> None:
    pods = [
        pod(0, revision="web-old"),
        pod(1, ready=False),
        pod(2, deleting=True),
        pod(7, revision="web-old"),
    ]
    _, status = run(stateful_set(replicas=3), pods)
    assert status.replicas == 4  # terminating pods count
    assert status.ready_replicas == 3  # Running and Ready, terminating or not
    assert (status.current_replicas, status.updated_replicas) == (2, 1)  # not terminating
    assert (status.current_revision, status.update_revision) == ("web-old", "web-new")
    assert status.observed_generation == 2


def test_a_failed_write_ends_the_pass() -> None:
    with pytest.raises(RuntimeError, match="create web-0"):
        run(stateful_set(policy="Parallel"), [], fail="create web-0@web-new")
