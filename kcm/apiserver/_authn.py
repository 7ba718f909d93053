"""Authentication: who sent a request, as kube-apiserver's authenticator chain finds out.

In kube's order: a verified client certificate (:mod:`._client_certs`), then a bearer token,
tried as a static token (:mod:`._token_file`) and as a ServiceAccount token this server
signed (:mod:`._tokens`, :mod:`._service_account_auth`); every user found gets
``system:authenticated``. A request without any credentials is ``system:anonymous`` (group
``system:unauthenticated``) when anonymous requests are allowed. Credentials that do not
authenticate are a 401 even then, with kube's Status body (``Unauthorized``).

A server with no authenticator configured (no token, no token file, no client CA: the test
fixture's in-process mode) authenticates nobody and treats every caller as its administrator.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kcm.clock import Clock

from ._client_certs import peer_certificate, user_from_certificate
from ._requester import Requester
from ._service_account_auth import service_account_user
from ._status import StatusError
from ._store import Store
from ._token_file import StaticTokens
from ._tokens import ISSUER, InvalidToken, TokenIssuer

__all__ = ["Authenticator", "TokenReviewResult"]

_INVALID = "invalid bearer token"


@dataclass(frozen=True, slots=True)
class TokenReviewResult:
    """What a TokenReview answers: the user (None: not authenticated), the audiences the
    token is good for, and the error text."""

    user: Requester | None
    audiences: tuple[str, ...] = ()
    error: str = ""


@dataclass
class Authenticator:
    """The chain of one server.

    Attributes:
        tokens: static bearer tokens (``--token-auth-file``, ``--token``).
        issuer: verifies the ServiceAccount tokens this server issued.
        client_certs: whether the TLS layer asks for client certificates.
        anonymous: whether a request without credentials is ``system:anonymous`` (else 401).
        audiences: the API server's own audiences (a token for none of them is refused).
    """

    issuer: TokenIssuer
    clock: Clock
    tokens: StaticTokens = field(default_factory=StaticTokens)
    client_certs: bool = False
    anonymous: bool = False
    audiences: tuple[str, ...] = (ISSUER,)

    @property
    def enabled(self) -> bool:
        """Whether anyone is authenticated at all (else every caller is the administrator)."""
        return bool(self.tokens) or self.client_certs

    def authenticate(self, headers: dict[str, str], store: Store) -> Requester:
        """The user of a request.

        Raises:
            StatusError: 401, credentials that do not authenticate, or none when anonymous
                requests are not allowed.
        """
        if not self.enabled:
            return Requester.admin()
        der = peer_certificate() if self.client_certs else None
        if der is not None:
            user = user_from_certificate(der)
            if user is None:
                raise _unauthorized()
            return user.authenticated()
        token = _bearer(headers)
        if token is not None:
            result = self.review(token, self.audiences, store)
            if result.user is None:
                raise _unauthorized()
            return result.user
        if self.anonymous:
            return Requester.anonymous()
        raise _unauthorized()

    def review(self, token: str, audiences: tuple[str, ...], store: Store) -> TokenReviewResult:
        """Authenticate ``token`` for ``audiences`` (a request's or a TokenReview's)."""
        wanted = audiences or self.audiences
        user = self.tokens.authenticate(token)
        if user is not None:
            # a static token is audience-agnostic: good for the server's own audiences only
            shared = tuple(a for a in wanted if a in self.audiences)
            if shared:
                return TokenReviewResult(user.authenticated(), shared)
            return TokenReviewResult(None, (), _INVALID)
        try:
            claims = self.issuer.verify(token, list(wanted))
            if claims is None:
                return TokenReviewResult(None, (), _INVALID)
            found = service_account_user(store, token, claims, self.clock.now())
        except InvalidToken as exc:
            return TokenReviewResult(None, (), f"[{_INVALID}, {exc}]")
        token_audiences = claims.get("aud") or list(self.audiences)
        if isinstance(token_audiences, str):
            token_audiences = [token_audiences]
        shared = tuple(a for a in token_audiences if a in wanted)
        return TokenReviewResult(found.authenticated(), shared)


def _bearer(headers: dict[str, str]) -> str | None:
    """The token of ``Authorization: Bearer <token>``; None without one (an empty one too,
    as kube)."""
    value = headers.get("authorization", "")
    scheme, _, token = value.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip() or None


def _unauthorized() -> StatusError:
    return StatusError(401, "Unauthorized", "Unauthorized")
