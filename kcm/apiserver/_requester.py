"""Who a request acts as: what access reviews evaluate (``kubectl auth can-i``).

kcm authenticates no users: whoever may call the server is its administrator, a member of
``system:masters`` as kube-apiserver's admin credentials are. A request that impersonates
(``Impersonate-User``/``Impersonate-Group``, what ``kubectl --as``/``--as-group`` send) acts
as that user, with the groups kube-apiserver's impersonation filter gives it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Requester"]

_ADMIN_GROUPS = ("system:masters", "system:authenticated")
_SERVICE_ACCOUNT = "system:serviceaccount:"


@dataclass(frozen=True, slots=True)
class Requester:
    """A user name and groups (kube's ``user.Info``)."""

    name: str
    groups: tuple[str, ...]

    @property
    def privileged(self) -> bool:
        """``system:masters`` may do anything (kube's privileged-groups authorizer)."""
        return "system:masters" in self.groups

    @classmethod
    def admin(cls) -> Requester:
        """Whoever calls kcm's server without impersonating."""
        return cls("kcm-admin", _ADMIN_GROUPS)

    @classmethod
    def from_headers(cls, headers: dict[str, str]) -> Requester:
        """The administrator, or the user the request impersonates."""
        user = headers.get("impersonate-user")
        if not user:
            return cls.admin()
        groups = [g for g in headers.get("impersonate-group", "").split(",") if g]
        if user.startswith(_SERVICE_ACCOUNT):
            namespace = user.removeprefix(_SERVICE_ACCOUNT).split(":", 1)[0]
            groups += ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"]
        if user != "system:anonymous" and "system:authenticated" not in groups:
            groups.append("system:authenticated")
        return cls(user, tuple(groups))
