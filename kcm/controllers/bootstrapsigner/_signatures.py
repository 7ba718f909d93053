"""What the ``cluster-info`` ConfigMap's data should be (kube's ``signConfigMap``): its
``kubeconfig`` plus one ``jws-kubeconfig-<id>`` per bootstrap token that may sign, and no
signature of any other token."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from kcm.controllerkit import (
    BOOTSTRAP_TOKEN_SECRET_TYPE,
    bootstrap_token_expiration,
    bootstrap_token_id,
    secret_text,
)
from kcm.models.core_v1 import Secret

from ._jws import detached_signature

__all__ = ["KUBECONFIG_KEY", "SIGNATURE_PREFIX", "signed_data", "signing_tokens"]

KUBECONFIG_KEY = "kubeconfig"
SIGNATURE_PREFIX = "jws-kubeconfig-"


def _signing_token(secret: Secret, now: datetime) -> tuple[str, str] | None:
    """(id, secret) of a valid, unexpired token marked ``usage-bootstrap-signing: "true"``
    (kube's ``validateSecretForSigning``)."""
    name_id = bootstrap_token_id(secret.metadata.name or "")
    token_id = secret_text(secret, "token-id")
    if name_id is None or not token_id or token_id != name_id:
        return None
    token_secret = secret_text(secret, "token-secret")
    if not token_secret:
        return None
    if bootstrap_token_expiration(secret, now)[1]:
        return None
    if secret_text(secret, "usage-bootstrap-signing") != "true":
        return None
    return token_id, token_secret


def signing_tokens(secrets: Iterable[Secret], now: datetime) -> dict[str, str]:
    """Token id → token secret of every bootstrap token that signs; the first Secret of a
    duplicated id wins (kube's ``getTokens``)."""
    tokens: dict[str, str] = {}
    for secret in secrets:
        if secret.type != BOOTSTRAP_TOKEN_SECRET_TYPE:
            continue
        token = _signing_token(secret, now)
        if token is not None and token[0] not in tokens:
            tokens[token[0]] = token[1]
    return tokens


def signed_data(data: Mapping[str, str], tokens: Mapping[str, str]) -> dict[str, str] | None:
    """``data`` re-signed with ``tokens``, or None when it needs no write (no kubeconfig, or
    every signature already right and no stale one)."""
    content = data.get(KUBECONFIG_KEY)
    if content is None:
        return None
    old = {k[len(SIGNATURE_PREFIX) :]: v for k, v in data.items() if k.startswith(SIGNATURE_PREFIX)}
    new = {k: v for k, v in data.items() if not k.startswith(SIGNATURE_PREFIX)}
    changed = False
    for token_id, token_secret in tokens.items():
        signature = detached_signature(content, token_id, token_secret)
        if old.pop(token_id, None) != signature:
            changed = True
        new[SIGNATURE_PREFIX + token_id] = signature
    if old:
        changed = True
    return new if changed else None
