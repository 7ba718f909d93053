"""Pod events become StatefulSet keys: by controller reference, orphans by selector, the
minReadySeconds recheck, and what is ignored."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec

from kcm.controllers.statefulset._events import PodEvents
from kcm.informers import Indexer, Lister
from kcm.models import ObjectKey
from kcm.models.apps_v1 import StatefulSet, StatefulSetSpec
from kcm.models.core_v1 import Pod, PodCondition, PodStatus
from kcm.models.meta_v1 import LabelSelector, ObjectMeta, OwnerReference

WEB = ObjectKey("ns", "web")
DB = ObjectKey("ns", "db")


def sts(name: str, labels: dict[str, str] | None, *, min_ready: int = 0) -> StatefulSet:
    selector = LabelSelector(match_labels=labels) if labels is not None else None
    return StatefulSet(
        metadata=ObjectMeta(name=name, namespace="ns", uid=f"uid-{name}"),
        spec=StatefulSetSpec(selector=selector, min_ready_seconds=min_ready),
    )


def ref(name: str, kind: str = "StatefulSet", uid: str | None = None) -> OwnerReference:
    return OwnerReference(
        api_version="apps/v1", kind=kind, name=name, uid=uid or f"uid-{name}", controller=True
    )


def pod(labels: dict[str, str], *refs: OwnerReference, rv: str = "1", ready: bool = False) -> Pod:
    return Pod(
        metadata=ObjectMeta(
            name="web-0",
            namespace="ns",
            labels=labels,
            owner_references=list(refs) or None,
            resource_version=rv,
        ),
        status=PodStatus(conditions=[PodCondition(type="Ready", status=str(ready))]),
    )


def handler(*sets: StatefulSet) -> tuple[PodEvents, list[tuple[ObjectKey, float]]]:
    indexer: Indexer[StatefulSet] = Indexer()
    for s in sets:
        indexer.add(s)
    later: list[tuple[ObjectKey, float]] = []
    return PodEvents(Lister(indexer), lambda key, delay: later.append((key, delay))), later


def test_an_owned_pod_concerns_its_set_only_while_the_uid_matches() -> None:
    events, _ = handler(sts("web", {"app": "web"}), sts("db", {"app": "web"}))
    assert list(events.create_keys(pod({"app": "web"}, ref("web")), is_in_initial_list=False)) == [
        WEB
    ]
    stale = pod({"app": "web"}, ref("web", uid="old"))
    assert list(events.create_keys(stale, is_in_initial_list=False)) == []
    other_kind = pod({"app": "web"}, ref("web", kind="ReplicaSet"))
    assert list(events.create_keys(other_kind, is_in_initial_list=False)) == []
    assert list(events.delete_keys(pod({}, ref("web")), final_state_unknown=True)) == [WEB]


def test_an_orphan_concerns_every_set_selecting_it() -> None:
    events, _ = handler(sts("web", {"app": "web"}), sts("db", {"app": "db"}), sts("all", {}))
    keys = events.create_keys(pod({"app": "web"}), is_in_initial_list=True)
    assert list(keys) == [WEB]  # an empty selector selects nothing here
    assert list(events.delete_keys(pod({"app": "web"}), final_state_unknown=False)) == []


def test_updates_concern_old_and_new_owners_and_relabelled_orphans() -> None:
    events, _ = handler(sts("web", {"app": "web"}), sts("db", {"app": "db"}))
    moved = events.update_keys(
        pod({"app": "web"}, ref("db")), pod({"app": "web"}, ref("web"), rv="2")
    )
    assert list(moved) == [DB, WEB]
    released = events.update_keys(pod({"app": "db"}, ref("web")), pod({"app": "db"}, rv="2"))
    assert list(released) == [WEB, DB]  # the old owner, and who may adopt it now
    relabelled = events.update_keys(pod({"app": "web"}), pod({"app": "db"}, rv="2"))
    assert list(relabelled) == [DB]
    assert list(events.update_keys(pod({"app": "web"}), pod({"app": "web"}, rv="2"))) == []
    resync = events.update_keys(pod({"app": "web"}, ref("web")), pod({"app": "web"}, ref("web")))
    assert list(resync) == []


def test_a_pod_turning_ready_rechecks_after_min_ready_seconds() -> None:
    events, later = handler(sts("web", {"app": "web"}, min_ready=10))
    old, new = pod({}, ref("web")), pod({}, ref("web"), rv="2", ready=True)
    assert list(events.update_keys(old, new)) == [WEB]
    assert later == [(WEB, 11.0)]
    events, later = handler(sts("web", {"app": "web"}))
    events.update_keys(old, new)
    assert later == []


def test_a_pod_seen_first_while_deleting_counts_as_a_delete() -> None:
    events, _ = handler(sts("web", {"app": "web"}))
    now = datetime(2026, 1, 1, tzinfo=UTC)
    orphan, owned = pod({"app": "web"}), pod({"app": "web"}, ref("web"))
    deleting_orphan = msgspec.structs.replace(
        orphan, metadata=msgspec.structs.replace(orphan.metadata, deletion_timestamp=now)
    )
    deleting_owned = msgspec.structs.replace(
        owned, metadata=msgspec.structs.replace(owned.metadata, deletion_timestamp=now)
    )
    assert list(events.create_keys(deleting_orphan, is_in_initial_list=False)) == []  # no adoption
    assert list(events.create_keys(deleting_owned, is_in_initial_list=False)) == [WEB]
