"""Admission: what kube-apiserver's admission plugins do to a write before it is stored.

The plugins of a default kube-apiserver that change or refuse what kcm serves, in their order:
``NamespaceLifecycle`` (create only in a namespace that exists and is not terminating),
``ServiceAccount`` (a pod names an existing account and gets its token volume),
``Priority`` (a pod's priority from its PriorityClass), ``DefaultTolerationSeconds`` (pods
tolerate not-ready and unreachable nodes for five minutes) and
``StorageObjectInUseProtection`` (claims and volumes get their protection finalizer). They run
before the kind's strategy, as in kube-apiserver: a missing namespace is a 404 before an
invalid name is a 422.
"""

from __future__ import annotations

from .._registry import Resource
from .._store import Obj, Store
from . import default_toleration_seconds, namespace_lifecycle, priority, service_account
from .object_in_use_protection import protect

__all__ = ["admit_create", "admit_update"]


def _is_pod(res: Resource) -> bool:
    return res.group == "" and res.kind == "Pod"


def admit_create(store: Store, res: Resource, ns: str, obj: Obj) -> None:
    """Run the admission plugins on a create of ``obj`` in namespace ``ns``.

    Raises:
        StatusError: 404/403 from NamespaceLifecycle, 403 from ServiceAccount or Priority.
    """
    name = obj["metadata"].get("name") or obj["metadata"].get("generateName") or ""
    namespace_lifecycle.admit_create(store, res, ns, name)
    if _is_pod(res):
        service_account.admit(store, ns, obj)
        priority.admit_create(store, obj)
        default_toleration_seconds.admit(obj)
    protect(res, obj)


def admit_update(res: Resource, subresource: str, new: Obj, old: Obj) -> None:
    """Run the admission plugins on an update of ``old`` to ``new``."""
    if _is_pod(res) and not subresource:
        priority.admit_update(new, old)
        default_toleration_seconds.admit(new)
