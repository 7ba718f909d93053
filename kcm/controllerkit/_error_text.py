"""Errors in event messages, as kube-controller-manager writes them."""

from __future__ import annotations

from kcm.errors import ApiError

__all__ = ["error_text"]


def error_text(exc: BaseException) -> str:
    """What Go's ``err.Error()`` prints: for an API error the Status message alone, so an
    event reads ``Error creating: pods "web-x" is forbidden: exceeded quota: ...`` with no
    ``403 Forbidden:`` in front (kcm's ``str()`` of an :class:`~kcm.errors.ApiError` keeps the
    code and reason, for logs)."""
    return exc.message if isinstance(exc, ApiError) else str(exc)
