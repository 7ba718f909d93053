"""Admission: what kube-apiserver's admission plugins check before a create is stored.

Only ``NamespaceLifecycle``: a namespaced object needs its namespace to exist and not to be
terminating.
"""

from __future__ import annotations

from ._registry import Resource
from ._status import StatusError
from ._store import Store

__all__ = ["admit_create"]

_NAMESPACES = ("", "namespaces")


def admit_create(store: Store, res: Resource, ns: str, name: str) -> None:
    """Refuse creating ``name`` in namespace ``ns`` (404 missing, 403 terminating)."""
    if not res.namespaced:
        return
    nsobj = store.get(_NAMESPACES, "", ns)
    if nsobj is None:
        raise StatusError.not_found("", "namespaces", ns)
    if nsobj.get("metadata", {}).get("deletionTimestamp") or (
        nsobj.get("status", {}).get("phase") == "Terminating"
    ):
        why = f"unable to create new content in namespace {ns} because it is being terminated"
        raise StatusError.forbidden(
            res.group,
            res.plural,
            name,
            why,
            causes=[
                {
                    "reason": "NamespaceTerminating",
                    "message": f"namespace {ns} is being terminated",
                    "field": "metadata.namespace",
                }
            ],
        )
