"""Legacy ServiceAccount tokens: JWTs signed with ``--service-account-private-key-file``.

kube's ``serviceaccount.JWTTokenGenerator(LegacyIssuer, key)`` with ``LegacyClaims``: RS256 for
an RSA key, ES256/ES384/ES512 for an EC key on P-256/P-384/P-521, the header's ``kid`` the
unpadded base64url SHA-256 of the public key's DER (SubjectPublicKeyInfo), no ``typ``, and the
claims with sorted keys, as go-jose writes them. RSA PKCS#1 v1.5 signatures are deterministic,
so a token equals Go's for the same key and claims byte for byte. Signing is PyJWT's.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any, final

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from kcm.errors import ConfigError

__all__ = ["LEGACY_ISSUER", "TokenGenerator", "legacy_claims"]

LEGACY_ISSUER = "kubernetes/serviceaccount"
"""The ``iss`` of secret-based tokens (kube's ``LegacyIssuer``)."""

_EC_ALGORITHMS = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}


def legacy_claims(
    namespace: str, service_account: str, service_account_uid: str, secret: str
) -> dict[str, str]:
    """kube's ``LegacyClaims``: the subject and the four private claims of a token Secret."""
    return {
        "kubernetes.io/serviceaccount/namespace": namespace,
        "kubernetes.io/serviceaccount/secret.name": secret,
        "kubernetes.io/serviceaccount/service-account.name": service_account,
        "kubernetes.io/serviceaccount/service-account.uid": service_account_uid,
        "sub": f"system:serviceaccount:{namespace}:{service_account}",
    }


def _key_id(public_key: rsa.RSAPublicKey | ec.EllipticCurvePublicKey) -> str:
    der = public_key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()


@final
class TokenGenerator:
    """Signs legacy tokens with one private key.

    Args:
        private_key: an RSA or EC (P-256, P-384, P-521) private key.
        issuer: the ``iss`` claim.

    Raises:
        ConfigError: another kind of key, or another curve.
    """

    def __init__(self, private_key: Any, *, issuer: str = LEGACY_ISSUER) -> None:
        if isinstance(private_key, rsa.RSAPrivateKey):
            self.algorithm = "RS256"
        elif isinstance(private_key, ec.EllipticCurvePrivateKey):
            algorithm = _EC_ALGORITHMS.get(private_key.curve.name)
            if algorithm is None:
                raise ConfigError(
                    f"unknown private key curve {private_key.curve.name}, must be 256, 384, or 521"
                )
            self.algorithm = algorithm
        else:
            raise ConfigError(
                f"unknown private key type {type(private_key).__name__}, must be RSA or ECDSA"
            )
        self._key = private_key
        self.issuer = issuer
        self.key_id = _key_id(private_key.public_key())

    def __repr__(self) -> str:
        return f"<TokenGenerator {self.algorithm} kid={self.key_id}>"

    @classmethod
    def from_file(cls, path: str | Path) -> TokenGenerator:
        """The generator for the first PEM private key in ``path`` (PKCS#1 ``RSA PRIVATE
        KEY``, SEC 1 ``EC PRIVATE KEY`` or PKCS#8 ``PRIVATE KEY``; other blocks are skipped).

        Raises:
            ConfigError: the file cannot be read or holds no usable private key.
        """
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise ConfigError(
                f"error reading key for service account token controller: {exc}", path=str(path)
            ) from exc
        for block in _pem_blocks(data):
            if b"PRIVATE KEY-----" not in block.splitlines()[0]:
                continue
            try:
                key = serialization.load_pem_private_key(block, password=None)
            except (ValueError, TypeError) as exc:
                raise ConfigError(
                    f"error reading key for service account token controller: {exc}",
                    path=str(path),
                ) from exc
            return cls(key)
        raise ConfigError(
            "error reading key for service account token controller: no private key in the file",
            path=str(path),
        )

    def token(self, claims: dict[str, str]) -> str:
        """A signed token with ``claims`` and ``iss`` (keys sorted, as go-jose)."""
        payload = dict(sorted({**claims, "iss": self.issuer}.items()))
        return jwt.encode(
            payload,
            self._key,
            algorithm=self.algorithm,
            headers={"kid": self.key_id, "typ": None},
        )


def _pem_blocks(data: bytes) -> list[bytes]:
    """Each ``-----BEGIN ...-----`` .. ``-----END ...-----`` block of a PEM file."""
    blocks: list[bytes] = []
    current: list[bytes] | None = None
    for line in data.splitlines(keepends=True):
        if line.startswith(b"-----BEGIN "):
            current = [line]
        elif current is not None:
            current.append(line)
            if line.startswith(b"-----END "):
                blocks.append(b"".join(current))
                current = None
    return blocks
