"""Namespace-related API answers every creating controller treats alike."""

from __future__ import annotations

from kcm.errors import ApiError

__all__ = ["is_namespace_terminating"]


def is_namespace_terminating(exc: BaseException) -> bool:
    """The API refused a create because the namespace is being deleted (status cause
    ``NamespaceTerminating``): controllers drop such errors silently."""
    return isinstance(exc, ApiError) and any(c.reason == "NamespaceTerminating" for c in exc.causes)
