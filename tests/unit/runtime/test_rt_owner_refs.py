"""Owner references: find the controller, build a controllerRef, set references on copies."""

from __future__ import annotations

import pytest

from kcm.errors import AlreadyOwnedError
from kcm.models import Unstructured
from kcm.models.apps_v1 import ReplicaSet
from kcm.models.core_v1 import ConfigMap, Pod
from kcm.models.meta_v1 import ObjectMeta, OwnerReference
from kcm.runtime import (
    get_controller_of,
    new_controller_ref,
    set_controller_reference,
    set_owner_reference,
)


def rs(name: str = "web", uid: str = "uid-web", namespace: str = "default") -> ReplicaSet:
    return ReplicaSet(metadata=ObjectMeta(name=name, uid=uid, namespace=namespace))


def pod(*refs: OwnerReference, namespace: str = "default") -> Pod:
    return Pod(
        metadata=ObjectMeta(name="p", namespace=namespace, owner_references=list(refs) or None)
    )


def test_get_controller_of_returns_the_controller_reference_only() -> None:
    plain = OwnerReference(api_version="v1", kind="ConfigMap", name="c", uid="1")
    ctrl = OwnerReference(
        api_version="apps/v1", kind="ReplicaSet", name="r", uid="2", controller=True
    )
    assert get_controller_of(pod(plain, ctrl)) == ctrl
    assert get_controller_of(pod(plain)) is None
    assert get_controller_of(pod()) is None
    not_ctrl = OwnerReference(api_version="v1", kind="X", name="x", uid="3", controller=False)
    assert get_controller_of(pod(not_ctrl)) is None


def test_new_controller_ref_sets_controller_and_block_owner_deletion() -> None:
    ref = new_controller_ref(rs(), "apps/v1", "ReplicaSet")
    assert ref == OwnerReference(
        api_version="apps/v1",
        kind="ReplicaSet",
        name="web",
        uid="uid-web",
        controller=True,
        block_owner_deletion=True,
    )


def test_new_controller_ref_needs_a_created_owner() -> None:
    with pytest.raises(ValueError, match="uid"):
        new_controller_ref(ReplicaSet(metadata=ObjectMeta(name="web")), "apps/v1", "ReplicaSet")


def test_set_controller_reference_returns_a_new_object_and_keeps_other_refs() -> None:
    plain = OwnerReference(api_version="v1", kind="ConfigMap", name="c", uid="1")
    original = pod(plain)
    owned = set_controller_reference(rs(), original, "apps/v1", "ReplicaSet")
    assert original.metadata.owner_references == [plain]  # untouched
    assert owned.metadata.owner_references == [
        plain,
        new_controller_ref(rs(), "apps/v1", "ReplicaSet"),
    ]
    assert get_controller_of(owned) == new_controller_ref(rs(), "apps/v1", "ReplicaSet")


def test_set_controller_reference_is_idempotent_and_updates_a_recreated_owner() -> None:
    once = set_controller_reference(rs(), pod(), "apps/v1", "ReplicaSet")
    twice = set_controller_reference(rs(), once, "apps/v1", "ReplicaSet")
    assert twice.metadata.owner_references == once.metadata.owner_references
    recreated = set_controller_reference(rs(uid="uid-2"), once, "apps/v1", "ReplicaSet")
    assert [r.uid for r in recreated.metadata.owner_references or []] == ["uid-2"]


def test_set_controller_reference_refuses_a_second_controller() -> None:
    owned = set_controller_reference(rs("a", "uid-a"), pod(), "apps/v1", "ReplicaSet")
    with pytest.raises(AlreadyOwnedError, match="already controlled by ReplicaSet 'a'") as info:
        set_controller_reference(rs("b", "uid-b"), owned, "apps/v1", "ReplicaSet")
    assert info.value.existing.uid == "uid-a"
    assert info.value.object_name == "default/p"


def test_cross_namespace_owner_is_refused() -> None:
    with pytest.raises(ValueError, match="cross-namespace"):
        set_controller_reference(rs(), pod(namespace="other"), "apps/v1", "ReplicaSet")
    with pytest.raises(ValueError, match="cross-namespace"):
        set_owner_reference(rs(), pod(namespace="other"), "apps/v1", "ReplicaSet")


def test_cluster_scoped_owner_may_own_namespaced_objects() -> None:
    node = ConfigMap(metadata=ObjectMeta(name="n", uid="uid-n"))  # no namespace: cluster scope
    owned = set_controller_reference(node, pod(), "v1", "Node")
    assert get_controller_of(owned) is not None


def test_set_owner_reference_adds_a_plain_reference_beside_the_controller() -> None:
    owned = set_controller_reference(rs(), pod(), "apps/v1", "ReplicaSet")
    cm = ConfigMap(metadata=ObjectMeta(name="cfg", uid="uid-cfg", namespace="default"))
    both = set_owner_reference(cm, owned, "v1", "ConfigMap")
    refs = both.metadata.owner_references or []
    assert [(r.kind, r.controller) for r in refs] == [("ReplicaSet", True), ("ConfigMap", None)]
    again = set_owner_reference(cm, both, "v1", "ConfigMap")
    assert again.metadata.owner_references == refs


def test_unstructured_objects_get_references_too() -> None:
    obj = Unstructured.from_dict(
        {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w", "namespace": "default"},
            "spec": {"size": 1},
        }
    )
    owned = set_controller_reference(rs(), obj, "apps/v1", "ReplicaSet")
    assert isinstance(owned, Unstructured)
    assert owned["spec"]["size"] == 1
    assert owned.to_dict()["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "apps/v1",
            "blockOwnerDeletion": True,
            "controller": True,
            "kind": "ReplicaSet",
            "name": "web",
            "uid": "uid-web",
        }
    ]
    assert get_controller_of(owned) == new_controller_ref(rs(), "apps/v1", "ReplicaSet")
    assert "ownerReferences" not in obj.to_dict()["metadata"]
