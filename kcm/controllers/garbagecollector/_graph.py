"""The ownership graph: uid -> node, updated synchronously from informer events.

kube-controller-manager's ``GraphBuilder.processGraphChanges``. Informer handlers are
synchronous, so each event is applied to the graph atomically (no graphChanges queue is
needed on one event loop). The graph never does I/O: it only decides which uids go on the
attemptToDelete / attemptToOrphan queues, through the callbacks it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

from cachetools import LRUCache

from kcm.models.meta_v1 import ObjectMeta, OwnerReference

__all__ = [
    "FOREGROUND_FINALIZER",
    "ORPHAN_FINALIZER",
    "Graph",
    "Identity",
    "Node",
    "coordinates",
    "matches_coordinates",
]

FOREGROUND_FINALIZER = "foregroundDeletion"
ORPHAN_FINALIZER = "orphan"


class Identity(NamedTuple):
    """Who an object is: an ownerReference's coordinates plus the namespace ("" if none)."""

    api_version: str
    kind: str
    name: str
    uid: str
    namespace: str = ""

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind}.{self.api_version} {where}{self.name} (uid {self.uid})"


def coordinates(ref: OwnerReference, namespace: str = "") -> Identity:
    """The identity an ownerReference names, placed in ``namespace``."""
    return Identity(ref.api_version or "", ref.kind or "", ref.name or "", ref.uid or "", namespace)


def matches_coordinates(ref: OwnerReference, identity: Identity) -> bool:
    """Whether ``ref`` names exactly ``identity`` (uid, name, kind and apiVersion)."""
    return (
        ref.uid == identity.uid
        and ref.name == identity.name
        and ref.kind == identity.kind
        and ref.api_version == identity.api_version
    )


class Node:
    """One object (or a *virtual* owner nobody has observed yet) in the graph."""

    __slots__ = (
        "being_deleted",
        "deleting_dependents",
        "dependents",
        "identity",
        "observed",
        "owners",
    )

    def __init__(
        self,
        identity: Identity,
        owners: Iterable[OwnerReference] = (),
        *,
        observed: bool = True,
        being_deleted: bool = False,
        deleting_dependents: bool = False,
    ) -> None:
        self.identity = identity
        self.owners: tuple[OwnerReference, ...] = tuple(owners)
        self.dependents: set[Node] = set()
        self.observed = observed
        self.being_deleted = being_deleted
        self.deleting_dependents = deleting_dependents

    @property
    def virtual(self) -> bool:
        """Referenced as an owner but never seen through an informer."""
        return not self.observed

    def blocking_dependents(self) -> list[Node]:
        """Dependents whose ownerReference to this node has ``blockOwnerDeletion: true``."""
        uid = self.identity.uid
        return [
            dep
            for dep in self.dependents
            if any(o.uid == uid and o.block_owner_deletion for o in dep.owners)
        ]

    def __repr__(self) -> str:
        flags = "".join(
            f for f, on in ((" virtual", self.virtual), (" deleting", self.being_deleted)) if on
        )
        return (
            f"<Node {self.identity}{flags} owners={len(self.owners)} deps={len(self.dependents)}>"
        )


def _has_finalizer(meta: ObjectMeta | None, name: str) -> bool:
    return meta is not None and name in (meta.finalizers or ())


def _deleting(meta: ObjectMeta | None) -> bool:
    return meta is not None and meta.deletion_timestamp is not None


def _starts_deleting_with(old: ObjectMeta | None, new: ObjectMeta, finalizer: str) -> bool:
    if not _deleting(new) or not _has_finalizer(new, finalizer):
        return False
    return old is None or not _deleting(old) or not _has_finalizer(old, finalizer)


def _partition(dependents: Iterable[Node], owner: Identity) -> tuple[list[Node], list[Node]]:
    """Dependents whose reference to ``owner.uid`` matches ``owner`` / does not (both possible)."""
    matching: list[Node] = []
    nonmatching: list[Node] = []
    for dep in dependents:
        match = mismatch = False
        if owner.namespace and owner.namespace != dep.identity.namespace:
            mismatch = True
        else:
            for ref in dep.owners:
                if ref.uid == owner.uid:
                    if matches_coordinates(ref, owner):
                        match = True
                    else:
                        mismatch = True
        if match:
            matching.append(dep)
        if mismatch:
            nonmatching.append(dep)
    return matching, nonmatching


def _sort_key(i: Identity) -> tuple[str, str, str, str, str]:
    return (i.kind, i.api_version, i.namespace, i.name, i.uid)


def _alternate_identity(deps: Iterable[Node], absent: Identity) -> Identity | None:
    """Another identity some dependent gives the absent owner's uid (kube's ordering)."""
    cluster_scoped = not absent.namespace
    seen = {absent}
    first: Identity | None = None
    following: Identity | None = None
    for dep in deps:
        for ref in dep.owners:
            if ref.uid != absent.uid:
                continue
            if matches_coordinates(ref, absent) and (
                cluster_scoped or absent.namespace == dep.identity.namespace
            ):
                continue
            alt = coordinates(ref, dep.identity.namespace)
            if cluster_scoped and alt.api_version == absent.api_version and alt.kind == absent.kind:
                alt = alt._replace(namespace="")
            if alt in seen:
                continue
            seen.add(alt)
            if first is None or _sort_key(alt) < _sort_key(first):
                first = alt
            if _sort_key(absent) < _sort_key(alt) and (
                following is None or _sort_key(alt) < _sort_key(following)
            ):
                following = alt
    return following if following is not None else first


class Graph:
    """The uid -> :class:`Node` map and the rules that keep it current.

    Args:
        attempt_to_delete: queue a uid for attemptToDelete.
        attempt_to_delete_later: queue a uid with backoff (a replaced virtual node).
        attempt_to_orphan: queue a uid for attemptToOrphan.
        invalid_namespace: report a dependent whose ownerReference (given) points at a
            namespaced owner in another namespace (event ``OwnerRefInvalidNamespace``).
        absent_cache_size: how many verified-absent owner identities to remember (kube: 500).

    Every method is synchronous and never raises for unexpected input.
    """

    def __init__(
        self,
        *,
        attempt_to_delete: Callable[[str], None],
        attempt_to_delete_later: Callable[[str], None],
        attempt_to_orphan: Callable[[str], None],
        invalid_namespace: Callable[[Node, OwnerReference], None],
        absent_cache_size: int = 500,
    ) -> None:
        self.nodes: dict[str, Node] = {}
        self.absent: LRUCache[Identity, bool] = LRUCache(maxsize=absent_cache_size)
        self._delete = attempt_to_delete
        self._delete_later = attempt_to_delete_later
        self._orphan = attempt_to_orphan
        self._invalid_namespace = invalid_namespace

    def __len__(self) -> int:
        return len(self.nodes)

    def get(self, uid: str) -> Node | None:
        """The node for ``uid``, or None."""
        return self.nodes.get(uid)

    # -- events ------------------------------------------------------------------------------

    def observe(
        self,
        api_version: str,
        kind: str,
        meta: ObjectMeta,
        old: ObjectMeta | None = None,
    ) -> None:
        """An informer add (``old`` None) or update of an object of ``kind``."""
        if old is not None and old.uid and old.uid != meta.uid:
            # delete + re-create seen as one update (informer identity is namespace/name)
            self.forget(api_version, kind, old)
            old = None
        uid = meta.uid
        if not uid:
            return
        identity = Identity(api_version, kind, meta.name or "", uid, meta.namespace or "")
        node = self.nodes.get(uid)
        if node is not None and not node.observed:
            if identity != node.identity:
                _, invalid = _partition(node.dependents, identity)
                for dep in invalid:
                    if identity.namespace and dep.identity.namespace != identity.namespace:
                        self._report_invalid(dep, uid)
                    self._delete(dep.identity.uid)
                node.identity = identity
            node.observed = True
        owners = tuple(meta.owner_references or ())
        if node is None:
            node = Node(
                identity,
                owners,
                being_deleted=_deleting(meta),
                deleting_dependents=_deleting(meta) and _has_finalizer(meta, FOREGROUND_FINALIZER),
            )
            self.nodes[uid] = node
            self._add_dependent_to_owners(node, owners)
        else:
            if node.identity.api_version != api_version or node.identity.kind != kind:
                node.identity = node.identity._replace(api_version=api_version, kind=kind)
            if owners != node.owners:
                added, removed, changed = _diff(node.owners, owners)
                for ref in removed:
                    if ref.block_owner_deletion:
                        self._enqueue_uid(ref.uid)
                for before, after in changed:
                    if before.block_owner_deletion and not after.block_owner_deletion:
                        self._enqueue_uid(after.uid)
                node.owners = owners
                self._add_dependent_to_owners(node, added)
                for ref in removed:
                    owner = self.nodes.get(ref.uid or "")
                    if owner is not None:
                        owner.dependents.discard(node)
            if _deleting(meta):
                node.being_deleted = True
        self._transitions(old, meta, node)

    def forget(
        self, api_version: str, kind: str, meta: ObjectMeta, *, virtual: bool = False
    ) -> None:
        """An informer delete, or (``virtual``) a verified absence found by attemptToDelete."""
        uid = meta.uid or ""
        node = self.nodes.get(uid)
        if node is None:
            return
        deleted = Identity(api_version, kind, meta.name or "", uid, meta.namespace or "")
        remove = True
        if virtual:
            if node.virtual:
                matching, nonmatching = _partition(node.dependents, deleted)
                if nonmatching:
                    remove = False
                    if matching:
                        self.absent[deleted] = True
                        for dep in matching:
                            self._delete(dep.identity.uid)
                    if node.identity == deleted:
                        alt = _alternate_identity(nonmatching, deleted)
                        if alt is not None:
                            node.identity = alt
                            self._delete_later(uid)
            elif node.identity != deleted:
                remove = False
                matching, _ = _partition(node.dependents, deleted)
                if matching:
                    self.absent[deleted] = True
                    for dep in matching:
                        self._delete(dep.identity.uid)
        if not remove:
            return
        del self.nodes[uid]
        for ref in node.owners:
            owner = self.nodes.get(ref.uid or "")
            if owner is not None:
                owner.dependents.discard(node)
        if node.dependents:
            self.absent[deleted] = True
        for dep in node.dependents:
            self._delete(dep.identity.uid)
        for ref in node.owners:
            owner = self.nodes.get(ref.uid or "")
            if owner is not None and owner.deleting_dependents:
                self._delete(owner.identity.uid)

    # -- helpers -----------------------------------------------------------------------------

    def _enqueue_uid(self, uid: str | None) -> None:
        if uid and uid in self.nodes:
            self._delete(uid)

    def _report_invalid(self, dep: Node, owner_uid: str) -> None:
        for ref in dep.owners:
            if ref.uid == owner_uid:
                self._invalid_namespace(dep, ref)
                return

    def _add_dependent_to_owners(self, node: Node, owners: Iterable[OwnerReference]) -> None:
        suspicious = False
        for ref in owners:
            uid = ref.uid or ""
            if not uid:
                continue  # kube-apiserver rejects such references; never link them
            owner = self.nodes.get(uid)
            if owner is None:
                owner = Node(coordinates(ref, node.identity.namespace), observed=False)
                self.nodes[uid] = owner
                owner.dependents.add(node)
                self._delete(uid)  # verify the virtual owner exists
                continue
            owner.dependents.add(node)
            if suspicious:
                continue
            owner_namespaced = bool(owner.identity.namespace)
            if owner_namespaced and owner.identity.namespace != node.identity.namespace:
                if owner.observed:
                    self._invalid_namespace(node, ref)
                suspicious = True
            elif not matches_coordinates(ref, owner.identity) or (
                not owner_namespaced
                and owner.identity.namespace != node.identity.namespace
                and not owner.observed
            ):
                suspicious = True
        if suspicious:
            self._delete(node.identity.uid)

    def _transitions(self, old: ObjectMeta | None, new: ObjectMeta, node: Node) -> None:
        if _starts_deleting_with(old, new, ORPHAN_FINALIZER):
            self._orphan(node.identity.uid)
            return
        if _starts_deleting_with(old, new, FOREGROUND_FINALIZER):
            node.deleting_dependents = True
            for dep in node.dependents:
                self._delete(dep.identity.uid)
            self._delete(node.identity.uid)


def _diff(
    old: Iterable[OwnerReference], new: Iterable[OwnerReference]
) -> tuple[list[OwnerReference], list[OwnerReference], list[tuple[OwnerReference, OwnerReference]]]:
    before = {r.uid: r for r in old}
    added: list[OwnerReference] = []
    changed: list[tuple[OwnerReference, OwnerReference]] = []
    for ref in new:
        prev = before.pop(ref.uid, None)
        if prev is None:
            added.append(ref)
        elif prev != ref:
            changed.append((prev, ref))
    return added, list(before.values()), changed
