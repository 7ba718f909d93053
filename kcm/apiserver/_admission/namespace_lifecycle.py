"""``NamespaceLifecycle``: a namespaced object is created only in a namespace that exists and
is not terminating."""

from __future__ import annotations

from .._registry import Resource
from .._status import StatusError
from .._store import Store
from ._plugin import Attributes, Plugin

__all__ = ["NamespaceLifecycle", "admit_create"]

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


class NamespaceLifecycle(Plugin):
    """The plugin: creates of namespaced kinds only."""

    name = "NamespaceLifecycle"

    def admit(self, a: Attributes) -> None:
        if a.operation == "CREATE":
            admit_create(a.store, a.resource, a.namespace, a.name)
