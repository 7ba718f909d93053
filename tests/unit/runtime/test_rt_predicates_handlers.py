"""Predicates (C13-C15, D18) and event handlers (C10-C12), as plain synchronous functions."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kcm.models import ObjectKey
from kcm.models.apps_v1 import Deployment, ReplicaSet
from kcm.models.core_v1 import ConfigMap, Namespace
from kcm.models.meta_v1 import ObjectMeta, OwnerReference
from kcm.runtime import (
    Predicate,
    PredicateFuncs,
    QueueingHandler,
    and_,
    annotations_changed,
    enqueue_mapped,
    enqueue_object,
    enqueue_owner,
    generation_changed,
    label_selector,
    labels_changed,
    not_,
    or_,
    predicate,
    resource_version_changed,
    spec_or_deletion_changed,
)


def cm(name: str = "a", **meta: Any) -> ConfigMap:
    meta.setdefault("namespace", "default")
    return ConfigMap(metadata=ObjectMeta(name=name, **meta))


def passes(p: Predicate[ConfigMap], old: ConfigMap, new: ConfigMap) -> tuple[bool, bool, bool]:
    """(create(new), update(old, new), delete(old)) for one predicate."""
    return (
        p.create(new, is_in_initial_list=False),
        p.update(old, new),
        p.delete(old, final_state_unknown=False),
    )


NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("pred", "old", "new", "expected_update"),
    [
        (generation_changed(), cm(generation=1), cm(generation=2), True),
        (generation_changed(), cm(generation=1), cm(generation=1, labels={"a": "b"}), False),
        (generation_changed(), cm(generation=1), cm(generation=1, deletion_timestamp=NOW), False),
        (resource_version_changed(), cm(resource_version="1"), cm(resource_version="2"), True),
        (resource_version_changed(), cm(resource_version="1"), cm(resource_version="1"), False),
        (labels_changed(), cm(labels={"a": "1"}), cm(labels={"a": "2"}), True),
        (labels_changed(), cm(), cm(labels={}), False),
        (annotations_changed(), cm(annotations={"x": "1"}), cm(), True),
        (annotations_changed(), cm(annotations={"x": "1"}), cm(annotations={"x": "1"}), False),
        (spec_or_deletion_changed(), cm(generation=1), cm(generation=2), True),
        (spec_or_deletion_changed(), cm(generation=1), cm(generation=1, labels={"a": "b"}), False),
        (
            spec_or_deletion_changed(),
            cm(generation=1),
            cm(generation=1, deletion_timestamp=NOW),
            True,
        ),
        (spec_or_deletion_changed(), cm(generation=1), cm(generation=1, finalizers=["f"]), True),
    ],
)
def test_update_only_predicates(
    pred: Predicate[ConfigMap], old: ConfigMap, new: ConfigMap, expected_update: bool
) -> None:
    assert passes(pred, old, new) == (True, expected_update, True)


def test_label_selector_applies_to_every_event() -> None:
    p: Predicate[ConfigMap] = label_selector("app=web")
    web, db = cm(labels={"app": "web"}), cm(labels={"app": "db"})
    assert passes(p, db, web) == (True, True, False)
    assert passes(p, web, db) == (False, False, True)
    assert label_selector({"app": "web"}).create(web, is_in_initial_list=True)
    assert not label_selector("app").create(cm(), is_in_initial_list=True)


def test_custom_predicates_and_combinators() -> None:
    named_a: Predicate[ConfigMap] = predicate(lambda o: o.metadata.name == "a")
    assert passes(named_a, cm("b"), cm("a")) == (True, True, False)
    only_updates = PredicateFuncs[ConfigMap](create=lambda o: False, delete=lambda o: False)
    assert passes(only_updates, cm(), cm()) == (False, True, False)
    gen = generation_changed()
    v1, v2 = cm(generation=1), cm(generation=2)
    assert passes(and_(named_a, gen), v1, v2) == (True, True, True)
    assert passes(named_a & gen, v1, v1) == (True, False, True)
    assert passes(or_(gen, labels_changed()), v1, v1) == (True, False, True)
    assert passes(gen | labels_changed(), v1, cm(generation=1, labels={"a": "b"}))[1]
    assert passes(not_(named_a), cm("b"), cm("a")) == (False, False, True)
    assert passes(~gen, v1, v2) == (False, False, False)
    assert passes(and_(), v1, v2) == (True, True, True)
    assert passes(or_(), v1, v2) == (False, False, False)


def test_enqueue_object() -> None:
    h = enqueue_object()
    assert list(h.create_keys(cm("a"), is_in_initial_list=True)) == [ObjectKey("default", "a")]
    assert list(h.update_keys(cm("old"), cm("new"))) == [ObjectKey("default", "new")]
    assert list(h.delete_keys(cm("a"), final_state_unknown=True)) == [ObjectKey("default", "a")]
    ns = Namespace(metadata=ObjectMeta(name="team"))
    assert list(h.create_keys(ns, is_in_initial_list=False)) == [ObjectKey("", "team")]


def ref(
    kind: str, name: str, *, api_version: str = "apps/v1", controller: bool | None = None
) -> OwnerReference:
    return OwnerReference(
        api_version=api_version, kind=kind, name=name, uid=f"uid-{name}", controller=controller
    )


def rs(*refs: OwnerReference) -> ReplicaSet:
    return ReplicaSet(metadata=ObjectMeta(name="rs", namespace="ns1", owner_references=list(refs)))


def test_enqueue_owner_matches_group_and_kind_and_controller() -> None:
    h = enqueue_owner(Deployment)
    child = rs(
        ref("Deployment", "web", controller=True),
        ref("Deployment", "other"),  # not the controller
        ref("Deployment", "wrong-group", api_version="example.com/v1", controller=True),
        ref("StatefulSet", "db", controller=True),
    )
    assert list(h.create_keys(child, is_in_initial_list=False)) == [ObjectKey("ns1", "web")]
    assert list(h.delete_keys(child, final_state_unknown=False)) == [ObjectKey("ns1", "web")]
    every = enqueue_owner(Deployment, only_controller=False)
    assert list(every.create_keys(child, is_in_initial_list=False)) == [
        ObjectKey("ns1", "web"),
        ObjectKey("ns1", "other"),
    ]
    assert list(h.create_keys(rs(), is_in_initial_list=False)) == []
    # version is ignored: apps/v1beta2 still names apps Deployments
    old_version = rs(ref("Deployment", "web", api_version="apps/v1beta2", controller=True))
    assert list(h.create_keys(old_version, is_in_initial_list=False)) == [ObjectKey("ns1", "web")]


def test_enqueue_owner_update_maps_old_and_new() -> None:
    h = enqueue_owner(Deployment)
    old = rs(ref("Deployment", "a", controller=True))
    new = rs(ref("Deployment", "b", controller=True))
    assert list(h.update_keys(old, new)) == [ObjectKey("ns1", "a"), ObjectKey("ns1", "b")]
    assert list(h.update_keys(old, old)) == [ObjectKey("ns1", "a")]  # deduplicated


def test_enqueue_owner_cluster_scoped_owner() -> None:
    h = enqueue_owner(Namespace)
    child = cm(owner_references=[ref("Namespace", "team", api_version="v1", controller=True)])
    assert list(h.create_keys(child, is_in_initial_list=False)) == [ObjectKey("", "team")]


def test_enqueue_mapped_dedups_updates() -> None:
    def by_label_values(obj: ConfigMap) -> list[ObjectKey]:
        return [ObjectKey("x", v) for v in (obj.metadata.labels or {}).values()]

    h = enqueue_mapped(by_label_values)
    old, new = cm(labels={"a": "1", "b": "2"}), cm(labels={"a": "2", "b": "3"})
    assert list(h.update_keys(old, new)) == [ObjectKey("x", v) for v in ("1", "2", "3")]
    assert list(h.delete_keys(old, final_state_unknown=True)) == [
        ObjectKey("x", "1"),
        ObjectKey("x", "2"),
    ]


def test_queueing_handler_runs_predicates_in_order_then_adds_keys() -> None:
    added: list[ObjectKey] = []
    calls: list[str] = []

    def track(name: str, result: bool) -> Predicate[ConfigMap]:
        def keep(obj: ConfigMap) -> bool:
            calls.append(name)
            return result

        return predicate(keep)

    handler = QueueingHandler(
        enqueue_object(), added.append, [track("p1", True), track("p2", True)]
    )
    handler.on_add(cm("a"), is_in_initial_list=True)
    handler.on_update(cm("a"), cm("b"))
    handler.on_delete(cm("c"), final_state_unknown=True)
    assert added == [ObjectKey("default", n) for n in "abc"]
    assert calls == ["p1", "p2"] * 3

    calls.clear()
    blocked = QueueingHandler(
        enqueue_object(), added.append, [track("no", False), track("p", True)]
    )
    blocked.on_add(cm("z"), is_in_initial_list=False)
    blocked.on_update(cm("z"), cm("z"))
    blocked.on_delete(cm("z"), final_state_unknown=False)
    assert calls == ["no"] * 3  # the first False stops
    assert ObjectKey("default", "z") not in added
