"""The DaemonSet controller's pure arithmetic: server defaults, maxSurge/maxUnavailable, which
old pods a RollingUpdate replaces next, the status counts, updated-ness, the failed-pod
backoff (on a fake clock) and revision data."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import msgspec
import pytest

from kcm.controllers.daemonset import (
    CONTROLLER_REVISION_HASH_LABEL,
    TEMPLATE_GENERATION_ANNOTATION,
    TEMPLATE_GENERATION_LABEL,
    FailedPodBackoff,
    allows_surge,
    calculate_status,
    daemon_pod_template,
    find_updated_pods_on_node,
    is_pod_updated,
    matches_revision,
    max_surge_and_unavailable,
    new_revision,
    plan_rolling_update,
    revision_data,
    sort_daemon_pods,
    surge_count,
    template_generation,
    unavailable_count,
    with_server_defaults,
)
from kcm.models.apps_v1 import (
    ControllerRevision,
    DaemonSet,
    DaemonSetSpec,
    DaemonSetStatus,
    DaemonSetUpdateStrategy,
    RollingUpdateDaemonSet,
)
from kcm.models.core_v1 import (
    Container,
    Node,
    NodeSpec,
    Pod,
    PodCondition,
    PodSpec,
    PodStatus,
    PodTemplateSpec,
    Taint,
)
from kcm.models.meta_v1 import LabelSelector, ObjectMeta
from kcm.testing import FakeClock

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def ds(
    strategy: str | None = "RollingUpdate",
    *,
    max_unavailable: int | str | None = 1,
    max_surge: int | str | None = 0,
    min_ready: int | None = None,
    annotations: dict[str, str] | None = None,
) -> DaemonSet:
    rolling = (
        RollingUpdateDaemonSet(max_unavailable=max_unavailable, max_surge=max_surge)
        if strategy == "RollingUpdate"
        else None
    )
    return DaemonSet(
        metadata=ObjectMeta(
            name="agent", namespace="ns", uid="u1", generation=3, annotations=annotations
        ),
        spec=DaemonSetSpec(
            selector=LabelSelector(match_labels={"app": "agent"}),
            template=PodTemplateSpec(
                metadata=ObjectMeta(labels={"app": "agent"}),
                spec=PodSpec(containers=[Container(name="c", image="i")]),
            ),
            update_strategy=DaemonSetUpdateStrategy(type=strategy, rolling_update=rolling)
            if strategy
            else None,
            min_ready_seconds=min_ready,
        ),
    )


def pod(
    name: str,
    hash: str,
    *,
    ready_for: float | None = None,
    node: str | None = None,
    created: float = 0,
    deleting: bool = False,
    phase: str = "Running",
) -> Pod:
    conditions = None
    if ready_for is not None:
        since = NOW - timedelta(seconds=ready_for)
        conditions = [PodCondition(type="Ready", status="True", last_transition_time=since)]
    return Pod(
        metadata=ObjectMeta(
            name=name,
            labels={"app": "agent", CONTROLLER_REVISION_HASH_LABEL: hash},
            creation_timestamp=NOW + timedelta(seconds=created),
            deletion_timestamp=NOW if deleting else None,
        ),
        spec=PodSpec(node_name=node),
        status=PodStatus(phase=phase, conditions=conditions),
    )


# -- defaults and counts ---------------------------------------------------------------------


def test_server_defaults_fill_only_what_is_missing() -> None:
    bare = DaemonSet(metadata=ObjectMeta(name="x"), spec=DaemonSetSpec())
    filled = with_server_defaults(bare)
    assert filled.spec is not None
    assert filled.spec.revision_history_limit == 10
    strategy = filled.spec.update_strategy
    assert strategy is not None
    assert strategy.type == "RollingUpdate"
    assert strategy.rolling_update == RollingUpdateDaemonSet(max_unavailable=1, max_surge=0)
    on_delete = with_server_defaults(ds("OnDelete"))
    assert on_delete.spec is not None
    assert on_delete.spec.update_strategy == DaemonSetUpdateStrategy(type="OnDelete")
    custom = with_server_defaults(ds(max_unavailable="50%", max_surge=None))
    assert custom.spec is not None
    assert custom.spec.update_strategy is not None
    assert custom.spec.update_strategy.rolling_update == RollingUpdateDaemonSet(
        max_unavailable="50%", max_surge=0
    )


def test_surge_and_unavailable_scale_up_and_default() -> None:
    assert unavailable_count(ds(max_unavailable="10%"), 5) == 1  # rounds up
    assert unavailable_count(ds(max_unavailable="50%"), 5) == 3
    assert surge_count(ds(max_surge="25%", max_unavailable=0), 5) == 2
    assert surge_count(ds("OnDelete"), 5) == 0
    assert unavailable_count(ds("OnDelete"), 5) == 0
    assert max_surge_and_unavailable(ds(max_unavailable=0, max_surge=0), 3) == (0, 1)
    assert max_surge_and_unavailable(ds(max_unavailable=0, max_surge=0), 0) == (0, 0)
    assert allows_surge(ds(max_unavailable=0, max_surge=1))
    assert not allows_surge(ds(max_surge="x"))
    with pytest.raises(ValueError, match="nil value"):
        unavailable_count(ds(max_unavailable=None), 3)
    with pytest.raises(ValueError, match="percentage"):
        unavailable_count(ds(max_unavailable="3"), 3)


# -- updated-ness and order -------------------------------------------------------------------


def test_pods_are_updated_by_hash_or_generation() -> None:
    assert is_pod_updated(pod("a", "h2"), "h2", None)
    assert not is_pod_updated(pod("a", "h1"), "h2", None)
    by_generation = msgspec.structs.replace(
        pod("a", "h1"),
        metadata=ObjectMeta(name="a", labels={TEMPLATE_GENERATION_LABEL: "4"}),
    )
    assert is_pod_updated(by_generation, "h2", 4)
    assert not is_pod_updated(by_generation, "h2", 5)
    assert not is_pod_updated(pod("a", ""), "", None)


def test_template_generation_reads_the_annotation() -> None:
    assert template_generation(ds(annotations={TEMPLATE_GENERATION_ANNOTATION: "7"})) == 7
    assert template_generation(ds(annotations={TEMPLATE_GENERATION_ANNOTATION: "x"})) is None
    assert template_generation(ds(annotations={TEMPLATE_GENERATION_ANNOTATION: " 7"})) is None
    assert template_generation(ds()) is None


def test_daemon_pod_template_labels_and_tolerations() -> None:
    spec = ds().spec
    assert spec is not None
    assert spec.template is not None
    template = daemon_pod_template(spec.template, 2, "abc")
    assert template.metadata is not None
    assert template.metadata.labels == {
        "app": "agent",
        TEMPLATE_GENERATION_LABEL: "2",
        CONTROLLER_REVISION_HASH_LABEL: "abc",
    }
    assert template.spec is not None
    assert len(template.spec.tolerations or ()) == 6
    bare = daemon_pod_template(spec.template, None, "")
    assert bare.metadata is not None
    assert bare.metadata.labels == {"app": "agent"}


def test_daemon_pods_sort_bound_then_oldest_then_name() -> None:
    pods = [
        pod("d", "h", created=0),
        pod("c", "h", created=5, node="n1"),
        pod("b", "h", created=0),
        pod("a", "h", created=9, node="n1"),
    ]
    assert [p.metadata.name for p in sort_daemon_pods(pods)] == ["c", "a", "b", "d"]


def test_find_updated_pods_on_node() -> None:
    new, old = pod("n", "h2"), pod("o", "h1")
    assert find_updated_pods_on_node([new, old], "h2", None) == (new, old, True)
    assert find_updated_pods_on_node([new, pod("x", "h2", deleting=True)], "h2", None) == (
        new,
        None,
        True,
    )
    assert find_updated_pods_on_node([old, pod("o2", "h0")], "h2", None) == (None, None, False)
    assert find_updated_pods_on_node([], "h2", None) == (None, None, True)


# -- rolling update plans ------------------------------------------------------------------------


def names(pods: list[Pod]) -> list[str]:
    return [str(p.metadata.name) for p in pods]


def test_without_surge_unavailable_old_pods_always_go_and_available_ones_within_the_budget() -> (
    None
):
    node_to_pods = {
        "n1": [pod("old-ready-1", "h1", ready_for=100)],
        "n2": [pod("old-ready-2", "h1", ready_for=100)],
        "n3": [pod("old-not-ready", "h1")],
        "n4": [pod("new-ready", "h2", ready_for=100)],
    }
    plan = plan_rolling_update(ds(), node_to_pods, 0, 1, "h2", None, NOW)
    # n1 fits the budget of one; the unavailable old pod on n3 goes regardless.
    assert names(plan.pods_to_delete) == ["old-not-ready", "old-ready-1"]
    assert plan.nodes_to_create == []
    more = plan_rolling_update(ds(), node_to_pods, 0, 3, "h2", None, NOW)
    assert names(more.pods_to_delete) == ["old-not-ready", "old-ready-1", "old-ready-2"]


def test_without_surge_unavailable_nodes_use_up_the_budget() -> None:
    node_to_pods: dict[str, list[Pod]] = {
        "n0": [],  # no pod yet: manage creates one; counts as unavailable
        "n1": [pod("old", "h1", ready_for=100)],
        "n2": [pod("new-starting", "h2")],
    }
    plan = plan_rolling_update(ds(), node_to_pods, 0, 2, "h2", None, NOW)
    assert plan.pods_to_delete == []
    plan = plan_rolling_update(ds(), node_to_pods, 0, 3, "h2", None, NOW)
    assert names(plan.pods_to_delete) == ["old"]


def test_min_ready_seconds_decides_availability() -> None:
    node_to_pods = {
        "n1": [pod("new", "h2", ready_for=5)],
        "n2": [pod("old", "h1", ready_for=100)],
    }
    slow = ds(min_ready=10)
    assert plan_rolling_update(slow, node_to_pods, 0, 1, "h2", None, NOW).pods_to_delete == []
    fast = ds(min_ready=4)
    assert names(plan_rolling_update(fast, node_to_pods, 0, 1, "h2", None, NOW).pods_to_delete) == [
        "old"
    ]


def test_with_surge_new_pods_come_first_and_old_ones_go_once_they_are_available() -> None:
    node_to_pods = {
        "n1": [pod("old-1", "h1", ready_for=100)],
        "n2": [pod("old-2", "h1", ready_for=100)],
        "n3": [pod("old-3", "h1")],  # unavailable: replaced at once
        "n4": [pod("old-4", "h1", ready_for=100), pod("new-4", "h2", ready_for=100)],
        "n5": [pod("old-5", "h1", ready_for=100), pod("new-5", "h2")],  # surging
    }
    surge = ds(max_unavailable=0, max_surge=2)
    plan = plan_rolling_update(surge, node_to_pods, 2, 0, "h2", None, NOW)
    assert names(plan.pods_to_delete) == ["old-4"]
    # One surge slot is taken by n5: one more candidate (n1) besides n3.
    assert plan.nodes_to_create == ["n3", "n1"]
    excess = {"n1": [pod("a", "h2"), pod("b", "h2")], "n2": [pod("old", "h1", ready_for=1)]}
    plan = plan_rolling_update(surge, excess, 1, 0, "h2", None, NOW)
    assert plan.nodes_to_create == []  # the excess node counts as surging


# -- status ------------------------------------------------------------------------------------


def test_status_counts() -> None:
    nodes = [
        Node(metadata=ObjectMeta(name="n1")),
        Node(metadata=ObjectMeta(name="n2")),
        Node(metadata=ObjectMeta(name="n3")),
        Node(
            metadata=ObjectMeta(name="n4"),
            spec=NodeSpec(taints=[Taint(key="x", effect="NoSchedule")]),
        ),
    ]
    node_to_pods = {
        "n1": [pod("a", "h2", ready_for=100), pod("a2", "h1", created=5)],
        "n2": [pod("b", "h1", ready_for=1)],
        "n4": [pod("d", "h2", ready_for=100)],
        "gone": [pod("e", "h2")],
    }
    status = calculate_status(ds(min_ready=10), nodes, node_to_pods, "h2", None, NOW)
    assert (
        status.desired_number_scheduled,
        status.current_number_scheduled,
        status.number_misscheduled,
        status.number_ready,
        status.number_available,
        status.updated_number_scheduled,
        status.number_unavailable,
    ) == (3, 2, 1, 2, 1, 1, 2)


def test_status_keeps_the_rest() -> None:
    with_collisions = msgspec.structs.replace(
        ds(), status=DaemonSetStatus(collision_count=2, observed_generation=1)
    )
    status = calculate_status(with_collisions, [], {}, "h", None, NOW)
    assert status.collision_count == 2
    assert status.observed_generation == 1


# -- failed pod backoff --------------------------------------------------------------------------


@pytest.mark.anyio
async def test_failed_pod_backoff_doubles_to_the_cap_and_expires(anyio_backend: str) -> None:
    clock = FakeClock()
    backoff = FailedPodBackoff(clock=clock, initial=1, maximum=8)
    assert not backoff.in_backoff("k")
    assert backoff.get("k") == 0
    backoff.next("k")
    assert backoff.in_backoff("k")
    assert backoff.get("k") == 1
    await clock.advance(1)
    assert not backoff.in_backoff("k")
    delays = []
    for _ in range(5):
        backoff.next("k")
        delays.append(backoff.get("k"))
    assert delays == [2, 4, 8, 8, 8]
    await clock.advance(7.9)
    assert backoff.in_backoff("k")
    await clock.advance(16.2)  # more than twice the cap since the last renewal: forgotten
    assert not backoff.in_backoff("k")
    backoff.next("k")
    assert backoff.get("k") == 1
    await clock.advance(17)
    backoff.gc()
    assert len(backoff) == 0


# -- revisions -----------------------------------------------------------------------------------


def test_revision_data_is_the_template_patch_go_writes() -> None:
    data = revision_data(ds())
    template = data["spec"]["template"]
    assert template["$patch"] == "replace"
    assert template["metadata"] == {"labels": {"app": "agent"}, "creationTimestamp": None}
    assert template["spec"]["containers"] == [{"name": "c", "image": "i", "resources": {}}]


def test_revisions_match_by_template_nil_and_empty_aside() -> None:
    revision = new_revision(ds(), "h1", 3)
    assert revision.metadata.name == "agent-h1"
    assert revision.metadata.labels == {"app": "agent", CONTROLLER_REVISION_HASH_LABEL: "h1"}
    assert revision.revision == 3
    assert revision.metadata.owner_references is not None
    assert revision.metadata.owner_references[0].kind == "DaemonSet"
    assert matches_revision(ds(), revision)
    # Written by Go: the same template, without the fields it leaves out.
    go = ControllerRevision(
        data={
            "spec": {
                "template": {
                    "$patch": "replace",
                    "metadata": {"labels": {"app": "agent"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]},
                }
            }
        }
    )
    assert matches_revision(ds(), go)
    other = msgspec.structs.replace(
        ds(),
        spec=msgspec.structs.replace(
            ds().spec,
            template=PodTemplateSpec(
                metadata=ObjectMeta(labels={"app": "agent"}),
                spec=PodSpec(containers=[Container(name="c", image="j")]),
            ),
        ),
    )
    assert not matches_revision(other, revision)
