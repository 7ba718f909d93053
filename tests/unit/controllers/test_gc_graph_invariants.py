"""Hypothesis: the ownership graph stays consistent under any sequence of informer events."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kcm.controllers.garbagecollector import Graph
from kcm.models.meta_v1 import ObjectMeta, OwnerReference

NOW = datetime(2026, 1, 1, tzinfo=UTC)
UIDS = [f"u{i}" for i in range(12)]


class GraphMachine(RuleBasedStateMachine):
    """Random adds, owner changes, deletion starts and deletes of objects (uids never reused)."""

    def __init__(self) -> None:
        super().__init__()
        self.queued: set[str] = set()
        self.orphaned: set[str] = set()
        self.graph = Graph(
            attempt_to_delete=self.queued.add,
            attempt_to_delete_later=self.queued.add,
            attempt_to_orphan=self.orphaned.add,
            invalid_namespace=lambda node, ref: None,
        )
        self.live: dict[str, ObjectMeta] = {}
        self.dead: set[str] = set()

    def _meta(self, uid: str, owners: list[str], deleting: str | None) -> ObjectMeta:
        refs = [
            OwnerReference(
                api_version="v1", kind="ConfigMap", name=o, uid=o, block_owner_deletion=True
            )
            for o in owners
        ]
        return ObjectMeta(
            name=uid,
            uid=uid,
            namespace="ns",
            owner_references=refs or None,
            deletion_timestamp=NOW if deleting else None,
            finalizers=[deleting] if deleting else None,
        )

    @rule(
        uid=st.sampled_from(UIDS), owners=st.lists(st.sampled_from(UIDS), max_size=3, unique=True)
    )
    def add(self, uid: str, owners: list[str]) -> None:
        if uid in self.live or uid in self.dead:
            return
        meta = self._meta(uid, [o for o in owners if o != uid], None)
        self.graph.observe("v1", "ConfigMap", meta)
        self.live[uid] = meta

    @precondition(lambda self: bool(self.live))
    @rule(
        data=st.data(),
        owners=st.lists(st.sampled_from(UIDS), max_size=3, unique=True),
        deleting=st.sampled_from([None, "orphan", "foregroundDeletion"]),
    )
    def update(self, data: st.DataObject, owners: list[str], deleting: str | None) -> None:
        uid = data.draw(st.sampled_from(sorted(self.live)))
        old = self.live[uid]
        meta = self._meta(uid, [o for o in owners if o != uid], deleting)
        self.graph.observe("v1", "ConfigMap", meta, old)
        self.live[uid] = meta
        if deleting == "foregroundDeletion":
            node = self.graph.get(uid)
            assert node is not None
            assert node.deleting_dependents

    @precondition(lambda self: bool(self.live))
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        uid = data.draw(st.sampled_from(sorted(self.live)))
        node = self.graph.get(uid)
        dependents = {d.identity.uid for d in node.dependents} if node else set()
        self.queued.clear()
        self.graph.forget("v1", "ConfigMap", self.live.pop(uid))
        self.dead.add(uid)
        assert self.graph.get(uid) is None
        assert dependents <= self.queued  # every dependent is re-examined

    @invariant()
    def links_are_symmetric(self) -> None:
        nodes = self.graph.nodes
        for uid, node in nodes.items():
            assert node.identity.uid == uid
            for dep in node.dependents:
                assert nodes.get(dep.identity.uid) is dep
                assert any(r.uid == uid for r in dep.owners)
        for uid in self.live:
            node = nodes[uid]
            assert node.observed
            for ref in node.owners:
                owner = nodes.get(ref.uid or "")
                if ref.uid in self.dead:
                    # the owner's deletion queued this dependent; a later reference may have
                    # made the uid a virtual node again, linking only the new referrer (kube)
                    assert owner is None or owner.virtual
                else:
                    assert owner is not None
                    assert node in owner.dependents

    @invariant()
    def virtual_nodes_are_never_live(self) -> None:
        for uid, node in self.graph.nodes.items():
            if node.virtual:
                assert uid not in self.live


TestGraphMachine = GraphMachine.TestCase
TestGraphMachine.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
