"""Detached JWS signatures of the ``cluster-info`` kubeconfig (kube's
``cluster-bootstrap/token/jws``): HS256 with the token secret as key and the token id as
``kid``; the payload is left out (``header..signature``), a joining node supplies it."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

__all__ = ["detached_signature", "detached_signature_is_valid"]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def detached_signature(content: str, token_id: str, token_secret: str) -> str:
    """The compact JWS of ``content`` without its payload, as go-jose writes it (header
    ``{"alg":"HS256","kid":<id>}``, keys sorted, no spaces)."""
    header = json.dumps({"alg": "HS256", "kid": token_id}, separators=(",", ":"), sort_keys=True)
    signing_input = f"{_b64(header.encode())}.{_b64(content.encode())}"
    mac = hmac.new(token_secret.encode(), signing_input.encode("ascii"), hashlib.sha256)
    return f"{_b64(header.encode())}..{_b64(mac.digest())}"


def detached_signature_is_valid(
    signature: str, content: str, token_id: str, token_secret: str
) -> bool:
    """Whether ``signature`` is ``content``'s with this token (what a joining node checks)."""
    return hmac.compare_digest(signature, detached_signature(content, token_id, token_secret))
