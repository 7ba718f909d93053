"""Service account tokens: JWTs signed with a key the server generates and keeps.

kube-apiserver signs its tokens with ``--service-account-signing-key-file``; kcm generates an
ECDSA P-256 key (ES256, one of the algorithms kube accepts for that key) the first time it
issues a token and keeps it for the server's life, restarts included. The claims are kube's
(``pkg/serviceaccount/claims.go``): ``iss``, ``sub`` (``system:serviceaccount:<ns>:<name>``),
``aud``, ``iat``/``nbf``/``exp`` and the ``kubernetes.io`` claim naming the namespace, the
ServiceAccount and the pod or secret the token is bound to. :meth:`TokenIssuer.verify` checks
a token's signature, issuer, audiences and times (kube's ``jwtTokenAuthenticator`` and the
``Validate`` of its claims); what it names still existing is :mod:`._service_account_auth`'s.
Legacy Secret-based tokens (``iss: kubernetes/serviceaccount``, no audience, no expiry) are
accepted when signed with the same key.
"""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import timedelta
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from kcm.clock import Clock

__all__ = ["ISSUER", "LEGACY_ISSUER", "InvalidToken", "TokenIssuer"]

ISSUER = "https://kubernetes.default.svc.cluster.local"
"""The ``iss`` claim, and the audience a TokenRequest without audiences gets."""

LEGACY_ISSUER = "kubernetes/serviceaccount"
"""The ``iss`` of Secret-based tokens (the tokens controller signs them)."""

_LEEWAY = 60
"""Seconds of clock skew allowed on ``exp``/``nbf`` (go-jose's ``DefaultLeeway``)."""


class InvalidToken(Exception):
    """A token this server signed (or claims to have) that is not valid; the message is kube's."""


class TokenIssuer:
    """Signs service account tokens; the key is generated on first use."""

    def __init__(self, clock: Clock, key: ec.EllipticCurvePrivateKey | None = None) -> None:
        self.clock = clock
        self._key: ec.EllipticCurvePrivateKey | None = None
        self._kid = ""
        if key is not None:
            self.use_key(key)

    def use_key(self, key: ec.EllipticCurvePrivateKey) -> None:
        """Sign with ``key`` from now on (a key kept in the data dir)."""
        self._key = key
        der = key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        # kube's key id: the unpadded base64url sha256 of the public key's DER
        digest = hashlib.sha256(der).digest()
        self._kid = base64.urlsafe_b64encode(digest).decode().rstrip("=")

    @property
    def key(self) -> ec.EllipticCurvePrivateKey:
        if self._key is None:
            self.use_key(ec.generate_private_key(ec.SECP256R1()))
        assert self._key is not None
        return self._key

    def issue(
        self,
        *,
        namespace: str,
        service_account: dict[str, Any],
        audiences: list[str],
        seconds: int,
        bound: dict[str, dict[str, str]] | None = None,
        warn_after: int = 0,
    ) -> str:
        """A token for ``service_account`` valid ``seconds`` from now (``bound``: ``{"pod":
        {"name", "uid"}}`` or a secret; ``warn_after``: kube's extended expiration)."""
        now = self.clock.now()
        expires = now + timedelta(seconds=seconds)
        meta = service_account.get("metadata") or {}
        private: dict[str, Any] = {
            "namespace": namespace,
            "serviceaccount": {"name": meta.get("name", ""), "uid": meta.get("uid", "")},
            **(bound or {}),
        }
        if warn_after:
            private["warnafter"] = int((now + timedelta(seconds=warn_after)).timestamp())
        claims = {
            "aud": audiences,
            "exp": int(expires.timestamp()),
            "iat": int(now.timestamp()),
            "iss": ISSUER,
            "kubernetes.io": private,
            "nbf": int(now.timestamp()),
            "sub": f"system:serviceaccount:{namespace}:{meta.get('name', '')}",
        }
        key = self.key
        return jwt.encode(claims, key, algorithm="ES256", headers={"kid": self._kid})

    def verify(self, token: str, audiences: list[str]) -> dict[str, Any] | None:
        """The claims of ``token`` when this server signed it for one of ``audiences``.

        Returns:
            None when the token is not one of this server's (not a JWT, another issuer): the
            next authenticator may know it.

        Raises:
            InvalidToken: a token with this server's issuer that does not verify, or is for
                other audiences, expired or not valid yet (kube's messages).
        """
        try:
            unverified = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            return None
        if not isinstance(unverified, dict) or unverified.get("iss") not in (
            ISSUER,
            LEGACY_ISSUER,
        ):
            return None
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                self.key.public_key(),
                algorithms=["ES256"],
                options={"verify_aud": False, "verify_exp": False, "verify_nbf": False},
            )
        except jwt.PyJWTError as exc:  # go-jose's text for a signature that does not verify
            raise InvalidToken("square/go-jose: error in cryptographic primitive") from exc
        # a legacy token has no audience: it is for the API server's own (kube's implicitAuds)
        token_audiences = claims.get("aud") or [ISSUER]
        if isinstance(token_audiences, str):
            token_audiences = [token_audiences]
        if not set(token_audiences) & set(audiences):
            raise InvalidToken(
                f"token audiences {_go_quote(token_audiences)} is invalid for the target "
                f"audiences {_go_quote(audiences)}"
            )
        if claims["iss"] == ISSUER:
            now = self.clock.now().timestamp()
            if "exp" in claims and now > float(claims["exp"]) + _LEEWAY:
                raise InvalidToken("service account token has expired")
            if "nbf" in claims and now < float(claims["nbf"]) - _LEEWAY:
                raise InvalidToken("service account token is not valid yet")
        return claims


def _go_quote(values: list[str]) -> str:
    """Go's ``%q`` of a string slice: ``["a" "b"]``."""
    return "[" + " ".join(json.dumps(v) for v in values) + "]"
