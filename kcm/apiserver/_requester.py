"""Who a request acts as (kube's ``user.Info``): what authentication finds, what authorization
and the access reviews decide for.

Without any authenticator configured (the test fixture's in-process mode) whoever may call the
server is its administrator, a member of ``system:masters`` as kube-apiserver's admin
credentials are. A request that impersonates (``Impersonate-User``/``Impersonate-Group``, what
``kubectl --as``/``--as-group`` send) acts as that user, with the groups kube-apiserver's
impersonation filter gives it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ANONYMOUS", "AUTHENTICATED", "Requester"]

ANONYMOUS = "system:anonymous"
AUTHENTICATED = "system:authenticated"
_UNAUTHENTICATED = "system:unauthenticated"
_ADMIN_GROUPS = ("system:masters", AUTHENTICATED)
_SERVICE_ACCOUNT = "system:serviceaccount:"

Extra = tuple[tuple[str, tuple[str, ...]], ...]
"""A user's extra attributes, as sorted ``(key, values)`` pairs (hashable)."""


@dataclass(frozen=True, slots=True)
class Requester:
    """A user name, groups, uid and extra attributes (kube's ``user.Info``)."""

    name: str
    groups: tuple[str, ...]
    uid: str = ""
    extra: Extra = ()

    @property
    def privileged(self) -> bool:
        """``system:masters`` may do anything (kube's privileged-groups authorizer)."""
        return "system:masters" in self.groups

    @property
    def user_info(self) -> dict[str, object]:
        """The ``UserInfo`` of a TokenReview's status (empty fields left out, as Go)."""
        info: dict[str, object] = {"username": self.name}
        if self.uid:
            info["uid"] = self.uid
        if self.groups:
            info["groups"] = list(self.groups)
        if self.extra:
            info["extra"] = {k: list(v) for k, v in self.extra}
        return info

    def authenticated(self) -> Requester:
        """This user with ``system:authenticated`` added (kube's AuthenticatedGroupAdder)."""
        if AUTHENTICATED in self.groups:
            return self
        return Requester(self.name, (*self.groups, AUTHENTICATED), self.uid, self.extra)

    @classmethod
    def admin(cls) -> Requester:
        """Whoever calls a server that authenticates nobody, without impersonating."""
        return cls("kcm-admin", _ADMIN_GROUPS)

    @classmethod
    def anonymous(cls) -> Requester:
        """A request without credentials when anonymous requests are allowed."""
        return cls(ANONYMOUS, (_UNAUTHENTICATED,))

    @classmethod
    def service_account(cls, namespace: str, name: str, uid: str = "") -> Requester:
        """``system:serviceaccount:<ns>:<name>`` with its two groups (and no more)."""
        groups = ("system:serviceaccounts", f"system:serviceaccounts:{namespace}")
        return cls(f"{_SERVICE_ACCOUNT}{namespace}:{name}", groups, uid)

    @classmethod
    def from_headers(cls, headers: dict[str, str], caller: Requester | None = None) -> Requester:
        """``caller`` (the administrator when not given), or the user the request
        impersonates."""
        user = headers.get("impersonate-user")
        if not user:
            return caller or cls.admin()
        groups = [g for g in headers.get("impersonate-group", "").split(",") if g]
        if user.startswith(_SERVICE_ACCOUNT):
            namespace = user.removeprefix(_SERVICE_ACCOUNT).split(":", 1)[0]
            groups += ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"]
        if user != ANONYMOUS and AUTHENTICATED not in groups:
            groups.append(AUTHENTICATED)
        return cls(user, tuple(groups))
