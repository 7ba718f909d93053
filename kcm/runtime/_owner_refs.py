"""Owner references: find an object's controller, build and set controller references.

A *controllerRef* is the one ``ownerReference`` with ``controller: true``: the object that
manages this one. Built-in controllers give every child a controllerRef with
``blockOwnerDeletion: true`` (so foreground deletion waits for it), and look children up by
it (kind, then name, then UID: a reference whose UID differs is to a previous incarnation).
"""

from __future__ import annotations

from typing import TypeVar

import msgspec

from kcm.errors import AlreadyOwnedError
from kcm.models import Unstructured
from kcm.models.meta_v1 import OwnerReference

from ._types import HasMetadata

__all__ = [
    "get_controller_of",
    "new_controller_ref",
    "set_controller_reference",
    "set_owner_reference",
]

ObjT = TypeVar("ObjT", bound=HasMetadata)


def get_controller_of(obj: HasMetadata) -> OwnerReference | None:
    """The object's controller reference (the ownerReference with ``controller: true``).

    Returns:
        The first such reference, or None for an orphan (the API server allows at most one).
    """
    for ref in obj.metadata.owner_references or ():
        if ref.controller:
            return ref
    return None


def new_controller_ref(owner: HasMetadata, api_version: str, kind: str) -> OwnerReference:
    """A controller reference to ``owner`` (``controller`` and ``blockOwnerDeletion`` true).

    Args:
        owner: the controlling object; its name and UID are used.
        api_version: the owner's ``group/version`` (``"apps/v1"``); objects read back from
            the API often have no ``apiVersion`` set, so it is passed explicitly.
        kind: the owner's kind (``"ReplicaSet"``).

    Raises:
        ValueError: the owner has no name or no UID (it was never created on a server).
    """
    meta = owner.metadata
    if not meta.name or not meta.uid:
        raise ValueError(
            f"cannot reference {kind} {meta.name!r}: the owner needs a name and a uid "
            "(use the object the API server returned)"
        )
    return OwnerReference(
        api_version=api_version,
        kind=kind,
        name=meta.name,
        uid=meta.uid,
        controller=True,
        block_owner_deletion=True,
    )


def _group(api_version: str | None) -> str:
    return (api_version or "").rpartition("/")[0]


def _same_owner(a: OwnerReference, b: OwnerReference) -> bool:
    """Same object by group, kind and name (controller-runtime's ``referSameObject``)."""
    return (_group(a.api_version), a.kind, a.name) == (_group(b.api_version), b.kind, b.name)


def _name_of(obj: HasMetadata) -> str:
    meta = obj.metadata
    return f"{meta.namespace}/{meta.name}" if meta.namespace else str(meta.name)


def _check_namespaces(owner: HasMetadata, obj: HasMetadata) -> None:
    owner_ns = owner.metadata.namespace or ""
    obj_ns = obj.metadata.namespace or ""
    if owner_ns and owner_ns != obj_ns:
        where = f"namespace {obj_ns!r}" if obj_ns else "a cluster-scoped object"
        raise ValueError(
            f"cross-namespace owner references are disallowed: owner "
            f"{owner_ns}/{owner.metadata.name} cannot own {where} ({_name_of(obj)})"
        )


def _with_owner_references(obj: ObjT, refs: list[OwnerReference]) -> ObjT:
    """A copy of ``obj`` whose ownerReferences are ``refs`` (typed models and Unstructured)."""
    if isinstance(obj, Unstructured):
        data = obj.to_dict()
        data.setdefault("metadata", {})["ownerReferences"] = [
            msgspec.to_builtins(ref) for ref in refs
        ]
        return Unstructured.from_dict(data)  # type: ignore[return-value]
    new_meta = msgspec.structs.replace(obj.metadata, owner_references=refs)
    return msgspec.structs.replace(obj, metadata=new_meta)  # type: ignore[type-var]


def _upsert(refs: list[OwnerReference], ref: OwnerReference) -> list[OwnerReference]:
    for i, existing in enumerate(refs):
        if _same_owner(existing, ref):
            return [*refs[:i], ref, *refs[i + 1 :]]
    return [*refs, ref]


def set_controller_reference(owner: HasMetadata, obj: ObjT, api_version: str, kind: str) -> ObjT:
    """``obj`` with a controller reference to ``owner`` (controller-runtime's
    ``SetControllerReference``); a reference to the same owner (group, kind, name) is replaced.

    Args:
        owner: the controlling object (needs a name and UID).
        obj: the object to own; never changed (a changed copy is returned).
        api_version: the owner's ``group/version``.
        kind: the owner's kind.

    Returns:
        A new object (same type as ``obj``) with the reference set.

    Raises:
        AlreadyOwnedError: another object is already ``obj``'s controller.
        ValueError: ``owner`` has no name/UID, or is namespaced and ``obj`` is in another
            namespace (or cluster-scoped).
    """
    ref = new_controller_ref(owner, api_version, kind)
    _check_namespaces(owner, obj)
    current = get_controller_of(obj)
    if current is not None and not _same_owner(current, ref):
        raise AlreadyOwnedError(
            f"{_name_of(obj)} is already controlled by {current.kind} {current.name!r} "
            f"(uid {current.uid}); it cannot also be controlled by {kind} {ref.name!r}",
            existing=current,
            object_name=_name_of(obj),
        )
    return _with_owner_references(obj, _upsert(list(obj.metadata.owner_references or ()), ref))


def set_owner_reference(owner: HasMetadata, obj: ObjT, api_version: str, kind: str) -> ObjT:
    """``obj`` with a plain (non-controller) owner reference to ``owner``
    (controller-runtime's ``SetOwnerReference``): the garbage collector deletes ``obj`` after
    every owner is gone. A reference to the same owner (group, kind, name) is replaced.

    Returns:
        A new object with the reference set (``obj`` is not changed).

    Raises:
        ValueError: ``owner`` has no name/UID, or is in another namespace than ``obj``.
    """
    meta = owner.metadata
    if not meta.name or not meta.uid:
        raise ValueError(
            f"cannot reference {kind} {meta.name!r}: the owner needs a name and a uid "
            "(use the object the API server returned)"
        )
    _check_namespaces(owner, obj)
    ref = OwnerReference(api_version=api_version, kind=kind, name=meta.name, uid=meta.uid)
    return _with_owner_references(obj, _upsert(list(obj.metadata.owner_references or ()), ref))
