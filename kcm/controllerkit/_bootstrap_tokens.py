"""Bootstrap token Secrets as the bootstrap controllers read them (kube's
``k8s.io/cluster-bootstrap``): ``bootstrap-token-<id>`` Secrets of type
``bootstrap.kubernetes.io/token`` in ``kube-system``, with an optional RFC 3339 ``expiration``."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from kcm.models.core_v1 import Secret

__all__ = [
    "BOOTSTRAP_TOKEN_NAMESPACE",
    "BOOTSTRAP_TOKEN_SECRET_TYPE",
    "bootstrap_token_expiration",
    "bootstrap_token_id",
    "secret_text",
]

BOOTSTRAP_TOKEN_SECRET_TYPE = "bootstrap.kubernetes.io/token"
"""The Secret type of a bootstrap token."""
BOOTSTRAP_TOKEN_NAMESPACE = "kube-system"
"""Where bootstrap token Secrets live."""
_NAME = re.compile(r"bootstrap-token-([a-z0-9]{6})")


def bootstrap_token_id(name: str) -> str | None:
    """The token id a Secret name carries (``bootstrap-token-abcdef`` → ``abcdef``), or None."""
    match = _NAME.fullmatch(name)
    return match.group(1) if match else None


def secret_text(secret: Secret, key: str) -> str:
    """``data[key]`` as text; "" when absent (kube's ``GetData``)."""
    value = (secret.data or {}).get(key)
    return value.decode("utf-8", "replace") if value else ""


def bootstrap_token_expiration(secret: Secret, now: datetime) -> tuple[timedelta, bool]:
    """(time left, expired) of a token Secret at ``now`` (kube's ``GetExpiration``): no
    ``expiration`` never expires (0, False); one that does not parse counts as expired."""
    text = secret_text(secret, "expiration")
    if not text:
        return timedelta(0), False
    try:
        at = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return timedelta(0), True
    if at.tzinfo is None:
        return timedelta(0), True
    left = at - now
    if left <= timedelta(0):
        return timedelta(0), True
    return left, False
