"""Delegated authentication and authorization of the secure port, as kube-controller-manager's.

Authentication is kube's union: a front proxy's certificate and headers
(``--requestheader-*``), then a client certificate (``--client-ca-file``), then a bearer token
checked with a TokenReview (``--authentication-kubeconfig``); the first that names a user
wins, and if none does, any that failed (a certificate its CA did not issue, a token the API
server refused) makes the request 401, else it is ``system:anonymous``. A bearer token with no
TokenReview client is not looked at (anonymous), as kube's. Authorization is a
SubjectAccessReview for the non-resource path (``get /metrics``); TokenReviews and reviews are
cached briefly (kube's 10 s). Paths in ``always_allow_paths`` (kube's default
``/healthz,/readyz,/livez``) and users in ``always_allow_groups`` (``system:masters``) skip
the SubjectAccessReview; authentication still runs, so a bad token is 401 everywhere.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeVar, final

from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.errors import KcmError
from kcm.models import (
    NonResourceAttributes,
    SubjectAccessReview,
    SubjectAccessReviewSpec,
    TokenReview,
    TokenReviewSpec,
)

from ._user import ANONYMOUS as ANONYMOUS
from ._user import AUTHENTICATED
from ._user import User as User
from ._x509_auth import CertificateRejected, Headers

if TYPE_CHECKING:
    from kcm.client import ApiClient

    from ._x509_auth import ClientCertAuthenticator, FrontProxyAuthenticator

__all__ = ["ANONYMOUS", "DEFAULT_ALWAYS_ALLOW_PATHS", "DelegatedAuth", "Denied", "User"]

logger = logging.getLogger(__name__)

DEFAULT_ALWAYS_ALLOW_PATHS: tuple[str, ...] = ("/healthz", "/readyz", "/livez")
"""kube-controller-manager's ``--authorization-always-allow-paths`` default."""

_CACHE_TTL = 10.0
"""kube's delegated authn cache and authz allow/deny caches are 10 s each."""

_CACHE_MAX = 1024

_K = TypeVar("_K")
_V = TypeVar("_V")


@final
class Denied(Exception):
    """A request refused: ``status`` 401 or 403 and kube's Status body."""

    def __init__(self, status: int, message: str, reason: str) -> None:
        super().__init__(message)
        self.status = status
        self.body = (
            json.dumps(
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Failure",
                    "message": message,
                    "reason": reason,
                    "details": {},
                    "code": status,
                },
                indent=2,
            ).encode()
            + b"\n"
        )


def _path_allowed(path: str, patterns: Sequence[str]) -> bool:
    """kube's path authorizer: exact paths, or a prefix ending in ``*``."""
    for pattern in patterns:
        if pattern.endswith("*") and path.startswith(pattern[:-1]):
            return True
        if path == pattern:
            return True
    return False


@final
class DelegatedAuth:
    """Authenticates and authorizes requests to the secure port, as kube's delegation.

    Args:
        authn_client: the client TokenReviews go through (``--authentication-kubeconfig``);
            None: bearer tokens are not looked at.
        authz_client: the client SubjectAccessReviews go through
            (``--authorization-kubeconfig``); None: only ``always_allow_*`` is allowed.
        client_certs: ``--client-ca-file``'s authenticator (None: certificates name no user).
        front_proxy: ``--requestheader-*``'s authenticator (None: no front proxy).
        always_allow_paths: paths allowed to anyone authenticated (anonymous included).
        always_allow_groups: groups allowed everything.
        clock: for the caches.
    """

    def __init__(
        self,
        authn_client: ApiClient | None,
        authz_client: ApiClient | None,
        *,
        client_certs: ClientCertAuthenticator | None = None,
        front_proxy: FrontProxyAuthenticator | None = None,
        always_allow_paths: Sequence[str] = DEFAULT_ALWAYS_ALLOW_PATHS,
        always_allow_groups: Sequence[str] = ("system:masters",),
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self._authn = authn_client
        self._authz = authz_client
        self._certificate_authenticators = tuple(
            a for a in (front_proxy, client_certs) if a is not None
        )
        self._paths = tuple(always_allow_paths)
        self._groups = frozenset(always_allow_groups)
        self._clock = clock
        self._users: dict[str, tuple[float, User | None]] = {}
        self._decisions: dict[tuple[User, str, str], tuple[float, bool]] = {}

    async def check(
        self,
        method: str,
        path: str,
        authorization: str | None,
        *,
        certificate: bytes | None = None,
        headers: Headers = (),
    ) -> User:
        """The user a request is from, if it may ``method path``.

        Args:
            method: the HTTP method (its lower case is the verb).
            path: the request path.
            authorization: the ``Authorization`` header.
            certificate: the TLS client certificate (DER), verified by the TLS layer.
            headers: all the request's headers (lower-cased names), for a front proxy's.

        Raises:
            Denied: 401 (no authenticator accepted what was presented) or 403 (not allowed).
        """
        user = await self.authenticate(authorization, certificate=certificate, headers=headers)
        verb = method.lower()
        if not await self.authorize(user, verb, path):
            raise Denied(
                403,
                f'forbidden: User "{user.name}" cannot {verb} path "{path}"',
                "Forbidden",
            )
        return user

    async def authenticate(
        self,
        authorization: str | None,
        *,
        certificate: bytes | None = None,
        headers: Headers = (),
    ) -> User:
        """The request's user: front proxy, client certificate, bearer token, in that order
        (the first that names one), else anonymous.

        Raises:
            Denied: 401 when none named a user and one of them failed.
        """
        failed = False
        for authenticator in self._certificate_authenticators:
            try:
                user = authenticator.authenticate(certificate, headers)
            except CertificateRejected as rejected:
                logger.debug("client certificate not accepted: %s", rejected)
                failed = True
                continue
            if user is not None:
                return _authenticated(user)
        scheme, _, token = (authorization or "").partition(" ")
        token = token.strip()
        if self._authn is not None and scheme.lower() == "bearer" and token:
            user = await self._token_user(self._authn, token)
            if user is not None:
                return _authenticated(user)
            failed = True
        if failed:
            raise Denied(401, "Unauthorized", "Unauthorized")
        return ANONYMOUS

    async def _token_user(self, client: ApiClient, token: str) -> User | None:
        key = hashlib.sha256(token.encode()).hexdigest()
        now = self._clock.monotonic()
        cached = self._users.get(key)
        if cached is not None and cached[0] > now:
            return cached[1]
        user = await self._review_token(client, token)
        _prune(self._users, now)
        self._users[key] = (now + _CACHE_TTL, user)
        return user

    async def _review_token(self, client: ApiClient, token: str) -> User | None:
        review = TokenReview(spec=TokenReviewSpec(token=token))
        try:
            result = await client.api(TokenReview).create(review)
        except KcmError as exc:
            logger.warning("TokenReview failed, so the request is unauthenticated: %s", exc)
            return None
        status = result.status
        if status is None or not status.authenticated or status.user is None:
            return None
        info = status.user
        extra = tuple(sorted((k, tuple(v)) for k, v in (info.extra or {}).items()))
        return User(info.username or "", tuple(info.groups or ()), info.uid or "", extra)

    async def authorize(self, user: User, verb: str, path: str) -> bool:
        """Whether ``user`` may ``verb path`` (always-allow lists, then a cached SAR)."""
        if self._groups.intersection(user.groups) or _path_allowed(path, self._paths):
            return True
        if self._authz is None:
            return False
        key = (user, verb, path)
        now = self._clock.monotonic()
        cached = self._decisions.get(key)
        if cached is not None and cached[0] > now:
            return cached[1]
        review = SubjectAccessReview(
            spec=SubjectAccessReviewSpec(
                user=user.name,
                groups=list(user.groups) or None,
                uid=user.uid or None,
                extra={k: list(v) for k, v in user.extra} or None,
                non_resource_attributes=NonResourceAttributes(path=path, verb=verb),
            )
        )
        try:
            result = await self._authz.api(SubjectAccessReview).create(review)
        except KcmError as exc:
            logger.warning("SubjectAccessReview failed, so the request is denied: %s", exc)
            return False
        allowed = bool(result.status is not None and result.status.allowed)
        _prune(self._decisions, now)
        self._decisions[key] = (now + _CACHE_TTL, allowed)
        return allowed


def _prune(cache: dict[_K, tuple[float, _V]], now: float) -> None:
    """Drop expired entries once the cache is large (many distinct tokens or users)."""
    if len(cache) >= _CACHE_MAX:
        for key in [k for k, (expires, _) in cache.items() if expires <= now]:
            del cache[key]


def _authenticated(user: User) -> User:
    """kube's AuthenticatedGroupAdder: every authenticated user is in system:authenticated."""
    if AUTHENTICATED in user.groups:
        return user
    return User(user.name, (*user.groups, AUTHENTICATED), user.uid, user.extra)
