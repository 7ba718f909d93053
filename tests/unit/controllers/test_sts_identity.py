"""StatefulSet pure helpers: names and ordinals, identity and storage, claims, defaults,
revisions (data, numbering, which may be deleted) and the status (completion, when to write,
the patch)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kcm.controllerkit import template_patch
from kcm.controllers.statefulset import POD_NAME_LABEL, REVISION_LABEL, parent_and_ordinal
from kcm.controllers.statefulset._identity import (
    claims_for,
    identity_matches,
    is_member_of,
    new_stateful_pod,
    storage_matches,
    with_identity,
    with_storage,
)
from kcm.controllers.statefulset._revisions import (
    apply_revision,
    new_revision,
    next_revision_number,
    revisions_to_delete,
)
from kcm.controllers.statefulset._spec import (
    allows_burst,
    is_created,
    is_healthy,
    is_running_and_available,
    partition,
    replicas,
    revision_history_limit,
    update_strategy,
)
from kcm.controllers.statefulset._status import (
    SetStatus,
    complete_rolling_update,
    status_differs,
    status_patch,
)
from kcm.models.apps_v1 import (
    ControllerRevision,
    RollingUpdateStatefulSetStrategy,
    StatefulSet,
    StatefulSetSpec,
    StatefulSetStatus,
    StatefulSetUpdateStrategy,
)
from kcm.models.core_v1 import (
    Container,
    PersistentVolumeClaim,
    PersistentVolumeClaimVolumeSource,
    Pod,
    PodCondition,
    PodSpec,
    PodStatus,
    PodTemplateSpec,
    Volume,
)
from kcm.models.meta_v1 import LabelSelector, ObjectMeta, OwnerReference

NOW = datetime(2026, 1, 1, tzinfo=UTC)
REF = OwnerReference(
    api_version="apps/v1", kind="StatefulSet", name="web", uid="u", controller=True
)


def sts(**spec: object) -> StatefulSet:
    base: dict[str, object] = {
        "replicas": 3,
        "service_name": "svc",
        "selector": LabelSelector(match_labels={"app": "web"}),
        "template": PodTemplateSpec(
            metadata=ObjectMeta(labels={"app": "web"}, annotations={"a": "1"}),
            spec=PodSpec(containers=[Container(name="c", image="nginx:1")]),
        ),
        "volume_claim_templates": [
            PersistentVolumeClaim(metadata=ObjectMeta(name="data", labels={"tier": "db"})),
            PersistentVolumeClaim(metadata=ObjectMeta(name="logs")),
        ],
    }
    base.update(spec)
    return StatefulSet(
        metadata=ObjectMeta(name="web", namespace="ns", uid="u", generation=4),
        spec=StatefulSetSpec(**base),  # type: ignore[arg-type]
    )


def pod(name: str, *, phase: str | None = "Running", ready: bool = True, **meta: object) -> Pod:
    conditions = [PodCondition(type="Ready", status="True" if ready else "False")]
    return Pod(
        metadata=ObjectMeta(name=name, **{"namespace": "ns", **meta}),  # type: ignore[arg-type]
        status=PodStatus(phase=phase, conditions=conditions) if phase else None,
    )


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("web-0", ("web", 0)),
        ("my-web-12", ("my-web", 12)),
        ("web", ("", -1)),
        ("web-x", ("", -1)),
        ("web-2147483648", ("web", -1)),  # does not fit in an int32: Go's ParseInt fails
        ("web-0-1", ("web-0", 1)),
        (None, ("", -1)),
    ],
)
def test_names_encode_the_parent_and_ordinal(name: str | None, expected: tuple[str, int]) -> None:
    assert parent_and_ordinal(name) == expected


def test_membership_is_by_name() -> None:
    assert is_member_of(sts(), pod("web-3"))
    assert not is_member_of(sts(), pod("web-extra"))
    assert not is_member_of(sts(), pod("webby-1"))


def test_a_new_pod_has_its_identity_storage_and_the_template() -> None:
    new = new_stateful_pod(sts(), 2, REF)
    assert new.metadata.name == "web-2"
    assert new.metadata.generate_name == "web-"
    assert new.metadata.labels == {"app": "web", POD_NAME_LABEL: "web-2"}
    assert new.metadata.annotations == {"a": "1"}
    assert list(new.metadata.owner_references or ()) == [REF]
    assert new.spec is not None
    assert (new.spec.hostname, new.spec.subdomain) == ("web-2", "svc")
    assert [(v.name, v.persistent_volume_claim) for v in new.spec.volumes or ()] == [
        ("data", PersistentVolumeClaimVolumeSource(claim_name="data-web-2")),
        ("logs", PersistentVolumeClaimVolumeSource(claim_name="logs-web-2")),
    ]
    assert identity_matches(sts(), new)
    assert storage_matches(sts(), new)
    assert not is_created(new)  # no phase: the API server has not seen it


def test_identity_needs_the_pod_name_label_and_namespace() -> None:
    s = sts()
    bare = pod("web-1")
    assert not identity_matches(s, bare)
    fixed = with_identity(s, bare)
    assert fixed.metadata.labels == {POD_NAME_LABEL: "web-1"}
    assert identity_matches(s, fixed)
    elsewhere = with_identity(s, pod("web-1", namespace="other"))
    assert elsewhere.metadata.namespace == "ns"


def test_storage_replaces_claim_volumes_and_keeps_the_others() -> None:
    s = sts()
    local = Volume(name="data")  # a volume of a claim template's name, but no claim: replaced
    extra = Volume(name="cache")
    stale = Pod(metadata=ObjectMeta(name="web-1"), spec=PodSpec(volumes=[extra, local]))
    assert not storage_matches(s, stale)
    fixed = with_storage(s, stale)
    assert fixed.spec is not None
    assert [v.name for v in fixed.spec.volumes or ()] == ["data", "logs", "cache"]
    assert storage_matches(s, fixed)
    assert storage_matches(sts(volume_claim_templates=None), stale)  # no templates: any storage
    assert not storage_matches(s, pod("web"))  # no ordinal


def test_claims_carry_the_selector_labels() -> None:
    data, logs = claims_for(sts(), 0)
    assert (data.metadata.name, data.metadata.namespace) == ("data-web-0", "ns")
    assert data.metadata.labels == {"tier": "db", "app": "web"}
    assert logs.metadata.labels == {"app": "web"}


def test_defaults_are_kube_apiservers() -> None:
    bare = StatefulSet(metadata=ObjectMeta(name="web"), spec=StatefulSetSpec())
    assert replicas(bare) == 1
    assert update_strategy(bare) == "RollingUpdate"
    assert partition(bare) == 0
    assert revision_history_limit(bare) == 10
    assert not allows_burst(bare)
    assert allows_burst(sts(pod_management_policy="Parallel"))
    rolling = StatefulSetUpdateStrategy(
        type="RollingUpdate", rolling_update=RollingUpdateStatefulSetStrategy(partition=2)
    )
    assert partition(sts(update_strategy=rolling)) == 2
    assert partition(sts(update_strategy=StatefulSetUpdateStrategy(type="OnDelete"))) == 0


def test_health_and_availability() -> None:
    assert is_healthy(pod("web-0"))
    assert not is_healthy(pod("web-0", phase="Pending"))
    assert not is_healthy(pod("web-0", ready=False))
    assert not is_healthy(pod("web-0", deletion_timestamp=NOW))
    since = NOW - timedelta(seconds=10)
    ready = Pod(
        status=PodStatus(
            phase="Running",
            conditions=[PodCondition(type="Ready", status="True", last_transition_time=since)],
        )
    )
    assert is_running_and_available(ready, 9, NOW)
    assert not is_running_and_available(ready, 10, NOW)  # strictly longer than minReadySeconds
    assert is_running_and_available(ready, 0, NOW)


def revision(name: str, number: int, image: str = "nginx:1") -> ControllerRevision:
    template = PodTemplateSpec(spec=PodSpec(containers=[Container(name="c", image=image)]))
    return ControllerRevision(
        metadata=ObjectMeta(name=name), data=template_patch(template), revision=number
    )


def test_a_revision_holds_the_template_and_restores_it() -> None:
    s = sts(revision_history_limit=3)
    s = StatefulSet(
        metadata=ObjectMeta(name="web", namespace="ns", uid="u", annotations={"note": "x"}),
        spec=s.spec,
    )
    rev = new_revision(s, 7, 2)
    assert rev.revision == 7
    assert rev.metadata.name is not None
    assert rev.metadata.name.startswith("web-")
    assert rev.metadata.annotations == {"note": "x"}
    assert (rev.metadata.labels or {})["app"] == "web"
    assert new_revision(s, 7, 3).metadata.name != rev.metadata.name  # the collision count
    old = apply_revision(s, revision("web-old", 1, image="nginx:0"))
    assert old.spec is not None
    assert old.spec.template is not None
    assert old.spec.template.spec is not None
    assert old.spec.template.spec.containers
    assert old.spec.template.spec.containers[0].image == "nginx:0"
    assert old.spec.replicas == 3  # only the template comes from the revision
    assert apply_revision(s, ControllerRevision(data={})) == s


def test_revision_numbers_follow_the_newest() -> None:
    assert next_revision_number([]) == 1
    assert next_revision_number([revision("a", 1), revision("b", 4)]) == 5


def test_history_keeps_live_revisions_and_the_newest_beyond_them() -> None:
    revisions = [revision(f"r{i}", i) for i in range(1, 7)]
    r = {rev.metadata.name: rev for rev in revisions}
    pods = [pod("web-0", labels={REVISION_LABEL: "r2"})]
    doomed = revisions_to_delete(sts(revision_history_limit=2), pods, revisions, r["r5"], r["r6"])
    # live: r5 (current), r6 (update), r2 (a pod's); history r1, r3, r4: keep the newest 2
    assert [d.metadata.name for d in doomed] == ["r1"]
    assert revisions_to_delete(sts(), pods, revisions, r["r5"], r["r6"]) == []  # limit 10
    none_kept = revisions_to_delete(sts(revision_history_limit=0), [], revisions, None, None)
    assert len(none_kept) == 6  # without known current and update revisions (a failed sync)


def status(**counts: int) -> SetStatus:
    return SetStatus(
        observed_generation=4,
        current_revision="r1",
        update_revision="r2",
        collision_count=0,
        **counts,
    )


def test_a_rolling_update_completes_when_all_are_updated_and_ready() -> None:
    done = status(replicas=3, updated_replicas=3, ready_replicas=3, current_replicas=1)
    complete_rolling_update(sts(), done)
    assert (done.current_revision, done.current_replicas) == ("r2", 3)
    halfway = status(replicas=3, updated_replicas=2, ready_replicas=3)
    complete_rolling_update(sts(), halfway)
    assert halfway.current_revision == "r1"
    on_delete = status(replicas=3, updated_replicas=3, ready_replicas=3)
    complete_rolling_update(
        sts(update_strategy=StatefulSetUpdateStrategy(type="OnDelete")), on_delete
    )
    assert on_delete.current_revision == "r1"


def test_a_status_is_written_only_when_it_says_something_new() -> None:
    s = sts()
    written = StatefulSet(
        metadata=s.metadata,
        spec=s.spec,
        status=StatefulSetStatus(
            observed_generation=4,
            replicas=3,
            ready_replicas=2,
            current_revision="r1",
            update_revision="r2",
            available_replicas=2,
            collision_count=0,
        ),
    )
    same = status(replicas=3, ready_replicas=2, available_replicas=2)
    assert not status_differs(written, same)
    same.collision_count = 5
    assert not status_differs(written, same)  # Go does not compare the collision count
    assert status_differs(written, status(replicas=3, ready_replicas=3, available_replicas=2))
    assert status_differs(s, status())  # nothing written yet: observedGeneration is news


def test_the_status_patch_replaces_the_whole_status_as_go_writes_it() -> None:
    body = status_patch("42", status(replicas=2, ready_replicas=0, available_replicas=0))
    assert body["metadata"] == {"resourceVersion": "42"}
    assert body["status"] == {
        "availableReplicas": 0,
        "collisionCount": 0,
        "conditions": None,
        "currentReplicas": None,
        "currentRevision": "r1",
        "observedGeneration": 4,
        "readyReplicas": None,
        "replicas": 2,
        "updateRevision": "r2",
        "updatedReplicas": None,
    }
    assert "metadata" not in status_patch(None, status())
