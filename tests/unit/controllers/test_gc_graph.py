"""The garbage collector's ownership graph: pure, synchronous rules."""

from __future__ import annotations

from datetime import UTC, datetime

from kcm.controllers.garbagecollector import Graph, Identity, Node
from kcm.models.meta_v1 import ObjectMeta, OwnerReference

NOW = datetime(2026, 1, 1, tzinfo=UTC)


class Queues:
    def __init__(self) -> None:
        self.delete: list[str] = []
        self.later: list[str] = []
        self.orphan: list[str] = []
        self.invalid: list[tuple[str, str]] = []

    def graph(self) -> Graph:
        return Graph(
            attempt_to_delete=self.delete.append,
            attempt_to_delete_later=self.later.append,
            attempt_to_orphan=self.orphan.append,
            invalid_namespace=lambda node, ref: self.invalid.append(
                (node.identity.name, ref.uid or "")
            ),
        )


def ref(
    uid: str, name: str = "owner", kind: str = "ConfigMap", block: bool = False
) -> OwnerReference:
    return OwnerReference(
        api_version="v1", kind=kind, name=name, uid=uid, block_owner_deletion=block or None
    )


def meta(
    name: str,
    uid: str,
    *owners: OwnerReference,
    namespace: str | None = "ns",
    deleting: bool = False,
    finalizers: list[str] | None = None,
) -> ObjectMeta:
    return ObjectMeta(
        name=name,
        uid=uid,
        namespace=namespace,
        owner_references=list(owners) or None,
        deletion_timestamp=NOW if deleting else None,
        finalizers=finalizers,
    )


def test_an_unknown_owner_becomes_a_virtual_node_that_is_verified() -> None:
    q = Queues()
    g = q.graph()
    g.observe("v1", "ConfigMap", meta("dep", "d1", ref("o1")))
    owner = g.get("o1")
    assert owner is not None
    assert owner.virtual
    assert owner.identity == Identity("v1", "ConfigMap", "owner", "o1", "ns")
    assert q.delete == ["o1"]
    g.observe("v1", "ConfigMap", meta("owner", "o1"))
    assert not owner.virtual
    assert {d.identity.uid for d in owner.dependents} == {"d1"}


def test_deleting_an_owner_queues_its_dependents_and_remembers_it_absent() -> None:
    q = Queues()
    g = q.graph()
    g.observe("v1", "ConfigMap", meta("owner", "o1"))
    g.observe("v1", "ConfigMap", meta("a", "d1", ref("o1")))
    g.observe("v1", "ConfigMap", meta("b", "d2", ref("o1")))
    q.delete.clear()
    g.forget("v1", "ConfigMap", meta("owner", "o1"))
    assert g.get("o1") is None
    assert sorted(q.delete) == ["d1", "d2"]
    assert Identity("v1", "ConfigMap", "owner", "o1", "ns") in g.absent


def test_foreground_deletion_marks_the_owner_and_queues_dependents_and_itself() -> None:
    q = Queues()
    g = q.graph()
    before = meta("owner", "o1")
    g.observe("v1", "ConfigMap", before)
    g.observe("v1", "ConfigMap", meta("a", "d1", ref("o1", block=True)))
    q.delete.clear()
    after = meta("owner", "o1", deleting=True, finalizers=["foregroundDeletion"])
    g.observe("v1", "ConfigMap", after, before)
    node = g.get("o1")
    assert node is not None
    assert node.deleting_dependents
    assert node.being_deleted
    assert q.delete == ["d1", "o1"]
    assert [d.identity.uid for d in node.blocking_dependents()] == ["d1"]
    # the same state again is not a transition
    q.delete.clear()
    g.observe("v1", "ConfigMap", after, after)
    assert q.delete == []


def test_orphan_deletion_goes_to_the_orphan_queue() -> None:
    q = Queues()
    g = q.graph()
    before = meta("owner", "o1")
    g.observe("v1", "ConfigMap", before)
    g.observe("v1", "ConfigMap", meta("owner", "o1", deleting=True, finalizers=["orphan"]), before)
    assert q.orphan == ["o1"]
    assert q.delete == []


def test_dropping_a_blocking_reference_requeues_the_waiting_owner() -> None:
    q = Queues()
    g = q.graph()
    g.observe("v1", "ConfigMap", meta("owner", "o1"))
    with_ref = meta("a", "d1", ref("o1", block=True))
    g.observe("v1", "ConfigMap", with_ref)
    q.delete.clear()
    g.observe("v1", "ConfigMap", meta("a", "d1"), with_ref)
    owner = g.get("o1")
    assert owner is not None
    assert q.delete == ["o1"]
    assert owner.dependents == set()
    # unblocking (true -> false) also requeues
    g.observe("v1", "ConfigMap", with_ref, meta("a", "d1"))
    q.delete.clear()
    g.observe("v1", "ConfigMap", meta("a", "d1", ref("o1")), with_ref)
    assert q.delete == ["o1"]


def test_an_update_with_a_new_uid_replaces_the_old_incarnation() -> None:
    q = Queues()
    g = q.graph()
    old = meta("owner", "o1")
    g.observe("v1", "ConfigMap", old)
    g.observe("v1", "ConfigMap", meta("a", "d1", ref("o1")))
    q.delete.clear()
    g.observe("v1", "ConfigMap", meta("owner", "o2"), old)
    assert g.get("o1") is None
    assert g.get("o2") is not None
    assert q.delete == ["d1"]  # the dependent of the old uid is re-examined


def test_a_reference_to_an_observed_owner_in_another_namespace_is_reported() -> None:
    q = Queues()
    g = q.graph()
    g.observe("v1", "ConfigMap", meta("owner", "o1", namespace="a"))
    g.observe("v1", "ConfigMap", meta("dep", "d1", ref("o1"), namespace="b"))
    assert q.invalid == [("dep", "o1")]
    assert q.delete == ["d1"]


def test_a_dependent_seen_first_is_reported_once_the_owner_is_observed_elsewhere() -> None:
    q = Queues()
    g = q.graph()
    g.observe("v1", "ConfigMap", meta("dep", "d1", ref("o1"), namespace="b"))
    q.delete.clear()
    g.observe("v1", "ConfigMap", meta("owner", "o1", namespace="a"))
    assert q.invalid == [("dep", "o1")]
    assert q.delete == ["d1"]


def test_a_virtual_delete_with_disagreeing_dependents_keeps_the_node_under_another_identity() -> (
    None
):
    q = Queues()
    g = q.graph()
    g.observe("v1", "ConfigMap", meta("x", "d1", ref("o1", name="owner")))
    g.observe("v1", "ConfigMap", meta("y", "d2", ref("o1", name="other-name")))
    q.delete.clear()
    g.forget("v1", "ConfigMap", meta("owner", "o1"), virtual=True)
    node = g.get("o1")
    assert node is not None
    assert node.identity.name == "other-name"
    assert q.delete == ["d1"]  # the dependent that named the verified-absent identity
    assert q.later == ["o1"]  # verify the alternative identity too


def test_a_cluster_scoped_owner_may_own_namespaced_dependents() -> None:
    q = Queues()
    g = q.graph()
    g.observe("v1", "Node", meta("n1", "o1", namespace=None))
    g.observe("v1", "ConfigMap", meta("dep", "d1", ref("o1", name="n1", kind="Node")))
    assert q.invalid == []
    assert q.delete == []
    owner = g.get("o1")
    assert isinstance(owner, Node)
    assert len(owner.dependents) == 1
