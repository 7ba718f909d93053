"""Unit tests for the Deployment controller's pure rollout arithmetic (no server)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import msgspec
import pytest

from kcm.controllerkit import SAFE_ALPHABET
from kcm.controllers.deployment import (
    DESIRED_REPLICAS_ANNOTATION,
    MAX_REPLICAS_ANNOTATION,
    REVISION_ANNOTATION,
    REVISION_HISTORY_ANNOTATION,
    calculate_status,
    cleanup_candidates,
    compute_hash,
    equal_ignore_hash,
    find_new_replica_set,
    find_old_replica_sets,
    max_scaled_down,
    max_surge,
    max_unavailable,
    new_rs_new_replicas,
    old_pods_running,
    plan_cleanup_unhealthy,
    plan_new_replica_set,
    plan_proportional_scale,
    plan_scale,
    plan_scale_down_old,
    resolve_fenceposts,
    rollout_status,
    set_new_replica_set_annotations,
    stuck_requeue_after,
)
from kcm.controllers.deployment._util import status_equal
from kcm.models.apps_v1 import (
    Deployment,
    DeploymentCondition,
    DeploymentSpec,
    DeploymentStatus,
    DeploymentStrategy,
    ReplicaSet,
    ReplicaSetCondition,
    ReplicaSetSpec,
    ReplicaSetStatus,
    RollingUpdateDeployment,
)
from kcm.models.core_v1 import Container, Pod, PodSpec, PodStatus, PodTemplateSpec
from kcm.models.meta_v1 import LabelSelector, ObjectMeta

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def template(image: str = "nginx:1", hash_: str | None = None) -> PodTemplateSpec:
    labels = {"app": "web"}
    if hash_ is not None:
        labels["pod-template-hash"] = hash_
    return PodTemplateSpec(
        metadata=ObjectMeta(labels=labels),
        spec=PodSpec(containers=[Container(name="c", image=image)]),
    )


def deployment(
    replicas: int = 4,
    surge: int | str | None = "25%",
    unavailable: int | str | None = "25%",
    *,
    strategy: str = "RollingUpdate",
    image: str = "nginx:1",
    generation: int = 1,
    status: DeploymentStatus | None = None,
    history: int | None = 10,
    deadline: int | None = 600,
    annotations: dict[str, str] | None = None,
) -> Deployment:
    rolling = (
        RollingUpdateDeployment(max_surge=surge, max_unavailable=unavailable)
        if strategy == "RollingUpdate"
        else None
    )
    return Deployment(
        metadata=ObjectMeta(
            name="web", namespace="ns", uid="d-uid", generation=generation, annotations=annotations
        ),
        spec=DeploymentSpec(
            replicas=replicas,
            selector=LabelSelector(match_labels={"app": "web"}),
            template=template(image),
            strategy=DeploymentStrategy(type=strategy, rolling_update=rolling),
            revision_history_limit=history,
            progress_deadline_seconds=deadline,
        ),
        status=status,
    )


def rs(
    name: str,
    spec: int,
    *,
    available: int | None = None,
    actual: int | None = None,
    image: str = "nginx:1",
    age: int = 0,
    revision: int | None = None,
    max_replicas: int | None = None,
    desired: int | None = None,
    generation: int = 1,
    observed: int = 1,
    conditions: list[ReplicaSetCondition] | None = None,
) -> ReplicaSet:
    annotations: dict[str, str] = {}
    if revision is not None:
        annotations[REVISION_ANNOTATION] = str(revision)
    if max_replicas is not None:
        annotations[MAX_REPLICAS_ANNOTATION] = str(max_replicas)
    if desired is not None:
        annotations[DESIRED_REPLICAS_ANNOTATION] = str(desired)
    actual = spec if actual is None else actual
    available = actual if available is None else available
    return ReplicaSet(
        metadata=ObjectMeta(
            name=name,
            namespace="ns",
            uid=f"{name}-uid",
            generation=generation,
            creation_timestamp=T0 - timedelta(seconds=age),
            annotations=annotations or None,
        ),
        spec=ReplicaSetSpec(replicas=spec, template=template(image, hash_=name)),
        status=ReplicaSetStatus(
            replicas=actual,
            ready_replicas=available,
            available_replicas=available,
            observed_generation=observed,
            conditions=conditions,
        ),
    )


# -- fenceposts -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("surge", "unavailable", "replicas", "expected"),
    [
        ("25%", "25%", 4, (1, 1)),
        ("25%", "25%", 10, (3, 2)),  # surge rounds up, unavailable down
        ("25%", "25%", 1, (1, 0)),
        (0, "10%", 5, (0, 1)),  # both 0 → maxUnavailable 1
        ("0%", "0%", 3, (0, 1)),
        (2, 3, 10, (2, 3)),
        ("50%", 0, 3, (2, 0)),
        (None, None, 5, (0, 1)),
    ],
)
def test_resolve_fenceposts_rounds_like_kubernetes(
    surge: int | str | None, unavailable: int | str | None, replicas: int, expected: tuple[int, int]
) -> None:
    assert resolve_fenceposts(surge, unavailable, replicas) == expected


def test_fenceposts_reject_a_bare_number_string() -> None:
    with pytest.raises(ValueError, match="percentage"):
        resolve_fenceposts("3", 1, 4)


def test_max_unavailable_is_capped_and_zero_for_recreate() -> None:
    assert max_unavailable(deployment(2, 0, 5)) == 2
    assert max_unavailable(deployment(0, 1, 1)) == 0
    assert max_unavailable(deployment(4, strategy="Recreate")) == 0
    assert max_surge(deployment(4, strategy="Recreate")) == 0
    assert max_surge(deployment(10, "25%", "25%")) == 3


# -- hash and identity ----------------------------------------------------------------------


def test_hash_is_stable_safe_and_changes_with_collision_count() -> None:
    a = compute_hash(template(), None)
    assert a == compute_hash(template(), None)
    assert set(a) <= set(SAFE_ALPHABET)
    assert a != compute_hash(template(), 1)
    assert compute_hash(template(), 1) != compute_hash(template(), 2)
    assert a != compute_hash(template("nginx:2"), None)
    # nil and empty containers hash alike (the API drops empties)
    empty_labels = PodTemplateSpec(
        metadata=ObjectMeta(labels={}), spec=PodSpec(containers=[Container(name="c")])
    )
    no_labels = PodTemplateSpec(
        metadata=ObjectMeta(), spec=PodSpec(containers=[Container(name="c")])
    )
    assert compute_hash(empty_labels, None) == compute_hash(no_labels, None)


def test_equal_ignore_hash_ignores_only_the_hash_label() -> None:
    assert equal_ignore_hash(template(), template(hash_="abc"))
    assert not equal_ignore_hash(template(), template("nginx:2", hash_="abc"))


def test_equal_ignore_hash_treats_nil_and_empty_alike() -> None:
    """Structs that differ only in nil against empty (a template read back from the server)
    are still the same template: the quick struct comparison falls back to the pruned one."""
    only_hash = PodTemplateSpec(
        metadata=ObjectMeta(labels={"pod-template-hash": "abc"}),
        spec=PodSpec(containers=[Container(name="c", env=[])]),
    )
    bare = PodTemplateSpec(metadata=ObjectMeta(), spec=PodSpec(containers=[Container(name="c")]))
    assert only_hash != bare
    assert equal_ignore_hash(only_hash, bare)
    assert equal_ignore_hash(bare, only_hash)


def test_the_new_rs_may_differ_from_the_template_in_nil_against_empty() -> None:
    d = deployment(image="nginx:2")
    match = rs("match", 1, image="nginx:2", age=5)
    assert match.spec is not None
    assert match.spec.template is not None
    spec = match.spec.template.spec
    assert spec is not None
    read_back = msgspec.structs.replace(
        match,
        spec=msgspec.structs.replace(
            match.spec,
            template=msgspec.structs.replace(
                match.spec.template, spec=msgspec.structs.replace(spec, volumes=[])
            ),
        ),
    )
    assert find_new_replica_set(d, [rs("old", 3, image="nginx:1", age=30), read_back]) is (
        read_back
    )


def test_status_equal_ignores_absent_zero_and_empty() -> None:
    assert status_equal(None, DeploymentStatus(replicas=0, conditions=[]))
    assert status_equal(DeploymentStatus(replicas=2), DeploymentStatus(replicas=2))
    assert not status_equal(DeploymentStatus(replicas=2), DeploymentStatus(replicas=3))


def test_new_rs_is_the_oldest_with_the_template() -> None:
    d = deployment(image="nginx:2")
    old = rs("old", 3, image="nginx:1", age=30)
    newer = rs("newer", 1, image="nginx:2", age=5)
    oldest_match = rs("oldest-match", 0, image="nginx:2", age=20)
    rss = [old, newer, oldest_match]
    assert find_new_replica_set(d, rss) is oldest_match
    active, all_old = find_old_replica_sets(d, rss)
    assert [r.metadata.name for r in active] == ["old", "newer"]
    assert {r.metadata.name for r in all_old} == {"old", "newer"}


# -- annotations ----------------------------------------------------------------------------


def test_new_rs_annotations_copy_deployment_and_set_revision_and_sizes() -> None:
    d = deployment(
        4,
        annotations={
            "team": "a",
            REVISION_ANNOTATION: "7",
            "kubectl.kubernetes.io/last-applied-configuration": "{}",
        },
    )
    annotations: dict[str, str] = {}
    assert set_new_replica_set_annotations(d, annotations, 3, exists=False)
    assert annotations == {
        "team": "a",
        REVISION_ANNOTATION: "3",
        DESIRED_REPLICAS_ANNOTATION: "4",
        MAX_REPLICAS_ANNOTATION: "5",
    }
    assert not set_new_replica_set_annotations(d, annotations, 3, exists=True)


def test_rollback_bumps_revision_and_appends_history() -> None:
    d = deployment()
    annotations = {REVISION_ANNOTATION: "1"}
    assert set_new_replica_set_annotations(d, annotations, 3, exists=True)
    assert annotations[REVISION_ANNOTATION] == "3"
    assert annotations[REVISION_HISTORY_ANNOTATION] == "1"
    set_new_replica_set_annotations(d, annotations, 5, exists=True)
    assert annotations[REVISION_HISTORY_ANNOTATION] == "1,3"
    # a lower revision never lowers it
    assert not set_new_replica_set_annotations(d, annotations, 2, exists=True)
    assert annotations[REVISION_ANNOTATION] == "5"


def test_revision_history_is_capped_in_characters() -> None:
    annotations = {REVISION_ANNOTATION: "9", REVISION_HISTORY_ANNOTATION: "1,2,3,4"}
    set_new_replica_set_annotations(
        deployment(), annotations, 10, exists=True, history_limit_chars=7
    )
    assert annotations[REVISION_HISTORY_ANNOTATION] == "2,3,4,9"


# -- rolling update ---------------------------------------------------------------------------


def test_new_rs_grows_within_surge() -> None:
    d = deployment(4, 1, 1, image="nginx:2")
    old = rs("old", 4, age=10)
    new = rs("new", 0, image="nginx:2")
    assert new_rs_new_replicas(d, [old, new], new) == 1  # 4 + 1 surge - 4
    assert plan_new_replica_set(d, [old, new], new) == 1
    at_limit = rs("new", 1, image="nginx:2", available=0)
    assert plan_new_replica_set(d, [old, at_limit], at_limit) is None  # Σ = 5 = limit
    too_big = rs("new", 6, image="nginx:2")
    assert plan_new_replica_set(d, [too_big], too_big) == 4


def test_old_scale_down_respects_max_unavailable() -> None:
    d = deployment(4, 1, 1, image="nginx:2")
    old = rs("old", 4, age=10)
    new = rs("new", 1, image="nginx:2", available=0)
    # Σspec 5 - minAvailable 3 - new unavailable 1 = 1
    assert max_scaled_down(d, [old, new], new) == 1
    steps = plan_scale_down_old(d, [old, new], [old])
    assert [(s.rs.metadata.name, s.replicas) for s in steps] == [("old", 3)]  # 4 avail - 3
    ready_new = rs("new", 1, image="nginx:2", available=1)
    steps = plan_scale_down_old(d, [old, ready_new], [old])
    assert [(s.rs.metadata.name, s.replicas) for s in steps] == [("old", 2)]


def test_unhealthy_old_replicas_go_first_oldest_first() -> None:
    a = rs("a", 3, available=1, age=30)
    b = rs("b", 2, available=0, age=20)
    c = rs("c", 2, available=2, age=10)
    steps = plan_cleanup_unhealthy([c, b, a], 3)
    assert [(s.rs.metadata.name, s.replicas) for s in steps] == [("a", 1), ("b", 1)]


def test_rolling_update_simulation_never_breaks_the_bounds() -> None:
    """Drive whole rollouts through the planning functions, playing the ReplicaSet controller
    (instant pods, ready one round later) and check every intermediate state."""
    for replicas, surge, unavailable in [
        (4, 1, 1),
        (10, "25%", "25%"),
        (5, 0, 1),
        (3, 2, 0),
        (7, "30%", "0%"),
    ]:
        d = deployment(replicas, surge, unavailable, image="nginx:2")
        ms, mu = resolve_fenceposts(surge, unavailable, replicas)
        old = rs("old", replicas, age=10)
        new = rs("new", 0, image="nginx:2")
        for _ in range(100):
            total = old.spec.replicas + new.spec.replicas  # type: ignore[union-attr,operator]
            assert total <= replicas + ms
            avail = (old.status.available_replicas or 0) + (new.status.available_replicas or 0)  # type: ignore[union-attr]
            assert avail >= replicas - mu
            if new.spec.replicas == replicas and old.spec.replicas == 0:  # type: ignore[union-attr]
                break
            target = plan_new_replica_set(d, [old, new], new)
            if target is not None:
                new = rs(
                    "new",
                    target,
                    image="nginx:2",
                    actual=target,
                    available=new.status.available_replicas,
                )  # type: ignore[union-attr]
            else:
                budget = max_scaled_down(d, [old, new], new)
                if budget > 0:
                    for step in plan_cleanup_unhealthy([old], budget):
                        old = rs("old", step.replicas, age=10)
                    for step in plan_scale_down_old(d, [old, new], [old]):
                        old = rs("old", step.replicas, age=10)
            # the kubelet: new pods become available
            new = rs("new", new.spec.replicas or 0, image="nginx:2")  # type: ignore[union-attr]
        else:
            pytest.fail(f"rollout {replicas}/{surge}/{unavailable} did not finish")


# -- proportional scaling -------------------------------------------------------------------


def test_proportional_scale_up_mid_rollout() -> None:
    # old 3, new 2, replicas 4 → 8 with maxSurge 1 (annotations say max 5 before)
    d = deployment(8, 1, 1, image="nginx:2")
    old = rs("old", 3, max_replicas=5, desired=4, age=10)
    new = rs("new", 2, image="nginx:2", max_replicas=5, desired=4)
    steps = plan_scale(d, new, [old])
    sizes = {s.rs.metadata.name: s.replicas for s in steps}
    assert sum(sizes.values()) == 9  # 8 + maxSurge 1
    assert sizes == {"old": 5, "new": 4}  # 3*9/5=5.4→5 first (larger), then 2*9/5=3.6→4
    assert all(s.direction == "up" for s in steps)


def test_proportional_scale_down_and_leftover_to_largest() -> None:
    d = deployment(2, 1, 1, image="nginx:2")
    old = rs("old", 6, max_replicas=11, age=10)
    new = rs("new", 5, image="nginx:2", max_replicas=11)
    steps = plan_proportional_scale(d, new, [old])
    sizes = {s.rs.metadata.name: s.replicas for s in steps}
    assert sum(sizes.values()) == 3
    assert steps[0].rs.metadata.name == "old"
    assert steps[0].direction == "down"


def test_scale_single_active_and_saturated() -> None:
    d = deployment(5, image="nginx:2")
    only = rs("new", 3, image="nginx:2")
    idle = rs("old", 0, age=10)
    assert [(s.rs.metadata.name, s.replicas) for s in plan_scale(d, only, [idle])] == [("new", 5)]
    saturated = rs("new", 5, image="nginx:2", desired=5)
    busy_old = rs("old", 2, age=10)
    steps = plan_scale(d, saturated, [busy_old])
    assert [(s.rs.metadata.name, s.replicas) for s in steps] == [("old", 0)]


# -- cleanup and recreate ---------------------------------------------------------------------


def test_cleanup_deletes_lowest_revisions_beyond_the_limit_only_when_idle() -> None:
    d = deployment(history=1)
    r1 = rs("r1", 0, revision=1, age=40)
    r2 = rs("r2", 0, revision=2, age=30, actual=1)  # still has a pod
    r3 = rs("r3", 0, revision=3, age=20)
    r4 = rs("r4", 0, revision=4, age=15, generation=2, observed=1)  # not observed yet
    names = [r.metadata.name for r in cleanup_candidates(d, [r3, r1, r2, r4])]
    assert names == ["r1", "r3"]
    assert cleanup_candidates(deployment(history=None), [r1, r3]) == []


def test_old_pods_running_ignores_finished_pods_and_the_new_rs() -> None:
    new = rs("new", 0)
    old = rs("old", 0, actual=0)

    def pod(phase: str) -> Pod:
        return Pod(metadata=ObjectMeta(name=phase), status=PodStatus(phase=phase))

    assert not old_pods_running(new, [old], {"old-uid": [pod("Succeeded"), pod("Failed")]})
    assert old_pods_running(new, [old], {"old-uid": [pod("Running")]})
    assert not old_pods_running(new, [old], {"new-uid": [pod("Running")]})
    assert old_pods_running(new, [rs("old", 0, actual=1)], {})


# -- status -----------------------------------------------------------------------------------


def test_status_counts_and_available_condition() -> None:
    d = deployment(4, 1, 1, image="nginx:2", generation=3)
    old = rs("old", 3, available=2, actual=3, age=10)
    new = rs("new", 2, image="nginx:2", available=0, actual=2)
    status = calculate_status([old, new], new, d, T0)
    assert (status.replicas, status.updated_replicas, status.available_replicas) == (5, 2, 2)
    assert status.unavailable_replicas == 3
    assert status.observed_generation == 3
    cond = status.conditions[0]  # type: ignore[index]
    assert (cond.type, cond.status, cond.reason) == (
        "Available",
        "False",
        "MinimumReplicasUnavailable",
    )
    ok = calculate_status([rs("new", 4, image="nginx:2")], None, d, T0)
    assert ok.conditions[0].reason == "MinimumReplicasAvailable"  # type: ignore[index]


def progressing(reason: str, status: str = "True", at: datetime = T0) -> DeploymentCondition:
    return DeploymentCondition(
        type="Progressing",
        status=status,
        reason=reason,
        last_update_time=at,
        last_transition_time=at,
    )


def test_progressing_complete_progress_and_timeout() -> None:
    base = DeploymentStatus(
        replicas=4,
        updated_replicas=1,
        available_replicas=3,
        ready_replicas=3,
        conditions=[progressing("NewReplicaSetCreated")],
    )
    d = deployment(4, 1, 1, image="nginx:2", status=base, deadline=60)
    new = rs("new", 4, image="nginx:2")
    done = rollout_status([new], new, d, T0 + timedelta(seconds=5))
    cond = next(c for c in done.conditions or [] if c.type == "Progressing")
    assert cond.reason == "NewReplicaSetAvailable"
    assert 'ReplicaSet "new"' in (cond.message or "")

    moved_new = rs("new", 2, image="nginx:2", available=1)
    moved = rollout_status(
        [rs("old", 2, age=9), moved_new],
        moved_new,
        d,
        T0 + timedelta(seconds=5),
    )
    cond = next(c for c in moved.conditions or [] if c.type == "Progressing")
    assert cond.reason == "ReplicaSetUpdated"
    assert cond.last_update_time == T0 + timedelta(seconds=5)
    assert cond.last_transition_time == T0

    stuck = [rs("old", 3, age=9), rs("new", 1, image="nginx:2", available=0)]
    still = rollout_status(stuck, stuck[1], d, T0 + timedelta(seconds=59))
    assert (
        next(c for c in still.conditions or [] if c.type == "Progressing").reason
        == "NewReplicaSetCreated"
    )
    assert stuck_requeue_after(d, still, T0 + timedelta(seconds=30)) == 31.0
    late = rollout_status(stuck, stuck[1], d, T0 + timedelta(seconds=61))
    cond = next(c for c in late.conditions or [] if c.type == "Progressing")
    assert (cond.status, cond.reason) == ("False", "ProgressDeadlineExceeded")


def test_no_deadline_removes_progressing_and_copies_replica_failure() -> None:
    d = deployment(
        1, status=DeploymentStatus(conditions=[progressing("ReplicaSetUpdated")]), deadline=None
    )
    failure = ReplicaSetCondition(
        type="ReplicaFailure", status="True", reason="FailedCreate", message="quota"
    )
    new = rs("new", 1, conditions=[failure], available=0, actual=0)
    status = rollout_status([new], new, d, T0)
    types = {c.type: c for c in status.conditions or []}
    assert "Progressing" not in types
    assert types["ReplicaFailure"].reason == "FailedCreate"
    healed = rollout_status([rs("new", 1)], None, msgspec.structs.replace(d, status=status), T0)
    assert "ReplicaFailure" not in {c.type for c in healed.conditions or []}
