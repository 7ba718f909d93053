"""ServiceAccount tokens as credentials: the claims of a verified token checked against what
is stored (kube's ``serviceaccount`` validators, ``pkg/serviceaccount/claims.go`` and
``legacy.go``).

A bound token (TokenRequest) is valid while its ServiceAccount exists with the uid it names,
and the pod or Secret it is bound to exists with its uid and is not being deleted. A legacy
token (from a ``kubernetes.io/service-account-token`` Secret) is valid while that Secret
exists, holds this very token and the ServiceAccount is the one it names.
"""

from __future__ import annotations

import base64
from datetime import datetime, timedelta
from typing import Any

from ._requester import Requester
from ._store import Obj, Store
from ._tokens import LEGACY_ISSUER, InvalidToken

__all__ = ["service_account_user"]

_LEGACY = "kubernetes.io/serviceaccount/"


def _deleted(obj: Obj, now: datetime) -> bool:
    """Deleted more than a minute ago (kube's ``invalidIfDeletedBefore``): a terminating pod's
    tokens stay valid through its grace period."""
    stamp = obj["metadata"].get("deletionTimestamp")
    if not stamp:
        return False
    when = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    return when < now - timedelta(seconds=60)


def _get(store: Store, plural: str, namespace: str, name: str) -> Obj | None:
    return store.get(("", plural), namespace, name)


def service_account_user(
    store: Store, token: str, claims: dict[str, Any], now: datetime
) -> Requester:
    """The user a verified token authenticates.

    Raises:
        InvalidToken: what it names is gone or replaced (kube's messages).
    """
    if claims.get("iss") == LEGACY_ISSUER:
        return _legacy_user(store, token, claims, now)
    private = claims.get("kubernetes.io")
    if not isinstance(private, dict):
        raise InvalidToken(
            "service account token claims could not be validated due to unexpected private claim"
        )
    namespace = str(private.get("namespace") or "")
    account = private.get("serviceaccount") or {}
    name, uid = str(account.get("name") or ""), str(account.get("uid") or "")
    found = _get(store, "serviceaccounts", namespace, name)
    if found is None:  # the getter's NotFound, passed on as it is
        raise InvalidToken(f'serviceaccounts "{name}" not found')
    if _deleted(found, now):
        raise InvalidToken(f"service account {namespace}/{name} has been deleted")
    if found["metadata"].get("uid") != uid:
        raise InvalidToken(
            f"service account UID ({found['metadata'].get('uid')}) does not match claim ({uid})"
        )
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()
    for kind, plural in (("secret", "secrets"), ("pod", "pods")):
        ref = private.get(kind)
        if not isinstance(ref, dict):
            continue
        bound = _get(store, plural, namespace, str(ref.get("name") or ""))
        if bound is None or _deleted(bound, now):
            raise InvalidToken("service account token has been invalidated")
        if bound["metadata"].get("uid") != ref.get("uid"):
            raise InvalidToken(
                f"{kind} UID ({bound['metadata'].get('uid')}) does not match service account "
                f"{kind} ref claim ({ref.get('uid')})"
            )
        if kind == "pod":
            extra = (
                ("authentication.kubernetes.io/pod-name", (str(ref.get("name")),)),
                ("authentication.kubernetes.io/pod-uid", (str(ref.get("uid")),)),
            )
    user = Requester.service_account(namespace, name, uid)
    return Requester(user.name, user.groups, user.uid, extra)


def _legacy_user(store: Store, token: str, claims: dict[str, Any], now: datetime) -> Requester:
    """kube's ``legacyValidator``."""
    namespace = str(claims.get(_LEGACY + "namespace") or "")
    secret_name = str(claims.get(_LEGACY + "secret.name") or "")
    name = str(claims.get(_LEGACY + "service-account.name") or "")
    uid = str(claims.get(_LEGACY + "service-account.uid") or "")
    for claim, value in (
        ("namespace", namespace),
        ("secretName", secret_name),
        ("serviceAccountName", name),
        ("serviceAccountUID", uid),
    ):
        if not value:
            raise InvalidToken(f"{claim} claim is missing")
    if claims.get("sub") != f"system:serviceaccount:{namespace}:{name}":
        raise InvalidToken("sub claim is invalid")
    secret = _get(store, "secrets", namespace, secret_name)
    if secret is None or _deleted(secret, now):
        raise InvalidToken("Token has been invalidated")
    stored = (secret.get("data") or {}).get("token") or ""
    try:
        matches = base64.b64decode(stored).decode() == token
    except ValueError:
        matches = False
    if not matches:
        raise InvalidToken("Token does not match server's copy")
    account = _get(store, "serviceaccounts", namespace, name)
    if account is None or _deleted(account, now):
        raise InvalidToken(f"ServiceAccount {namespace}/{name} has been deleted")
    if account["metadata"].get("uid") != uid:
        raise InvalidToken(
            f"ServiceAccount UID ({account['metadata'].get('uid')}) does not match claim ({uid})"
        )
    return Requester.service_account(namespace, name, uid)
