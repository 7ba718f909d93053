"""Namespaces as controllers meet them: the API's refusal to create in a terminating one, and
the key of the namespace an object lives in."""

from __future__ import annotations

from kcm.errors import ApiError
from kcm.models import ObjectKey
from kcm.runtime import HasMetadata

__all__ = ["is_namespace_terminating", "namespace_keys"]


def is_namespace_terminating(exc: BaseException) -> bool:
    """The API refused a create because the namespace is being deleted (status cause
    ``NamespaceTerminating``): controllers drop such errors silently."""
    return isinstance(exc, ApiError) and any(c.reason == "NamespaceTerminating" for c in exc.causes)


def namespace_keys(obj: HasMetadata) -> tuple[ObjectKey]:
    """The key of the namespace ``obj`` lives in, as an event handler's keys: controllers that
    sync a namespace (the ServiceAccount controller, the root CA publisher) queue it when one
    of its objects changes."""
    return (ObjectKey("", obj.metadata.namespace or ""),)
