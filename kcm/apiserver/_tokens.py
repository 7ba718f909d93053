"""Service account tokens: JWTs signed with a key the server generates and keeps.

kube-apiserver signs its tokens with ``--service-account-signing-key-file``; kcm generates an
ECDSA P-256 key (ES256, one of the algorithms kube accepts for that key) the first time it
issues a token and keeps it for the server's life, restarts included. The claims are kube's
(``pkg/serviceaccount/claims.go``): ``iss``, ``sub`` (``system:serviceaccount:<ns>:<name>``),
``aud``, ``iat``/``nbf``/``exp`` and the ``kubernetes.io`` claim naming the namespace, the
ServiceAccount and the pod or secret the token is bound to. Verifying them (authentication)
is not served yet.
"""

from __future__ import annotations

import base64
import hashlib
from datetime import timedelta
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from kcm.clock import Clock

__all__ = ["ISSUER", "TokenIssuer"]

ISSUER = "https://kubernetes.default.svc.cluster.local"
"""The ``iss`` claim, and the audience a TokenRequest without audiences gets."""


class TokenIssuer:
    """Signs service account tokens; the key is generated on first use."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._key: ec.EllipticCurvePrivateKey | None = None
        self._kid = ""

    @property
    def key(self) -> ec.EllipticCurvePrivateKey:
        if self._key is None:
            self._key = ec.generate_private_key(ec.SECP256R1())
            der = self._key.public_key().public_bytes(
                serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            # kube's key id: the unpadded base64url sha256 of the public key's DER
            digest = hashlib.sha256(der).digest()
            self._kid = base64.urlsafe_b64encode(digest).decode().rstrip("=")
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
