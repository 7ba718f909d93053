"""Who a request to the secure port is from (kube's ``user.Info``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ANONYMOUS", "AUTHENTICATED", "User"]

AUTHENTICATED = "system:authenticated"
"""The group kube adds to every authenticated user."""


@dataclass(frozen=True)
class User:
    """A request's user: from a TokenReview, a client certificate, a front proxy's headers,
    or anonymous."""

    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()


ANONYMOUS = User("system:anonymous", ("system:unauthenticated",))
