"""Kubernetes' ``rand.SafeEncodeString``: hashes as text without vowels (no bad words).

Deployment's ``pod-template-hash`` and ControllerRevision hashes are rendered this way.
"""

from __future__ import annotations

__all__ = ["SAFE_ALPHABET", "safe_encode_string"]

SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
"""Kubernetes' ``rand.SafeEncodeString`` alphabet: no vowels, no 0/1/3 (no bad words)."""


def safe_encode_string(text: str) -> str:
    """Each character of ``text`` replaced by ``SAFE_ALPHABET[ord(c) % 27]``
    (``rand.SafeEncodeString``); hashes are first written as decimal text."""
    return "".join(SAFE_ALPHABET[ord(c) % len(SAFE_ALPHABET)] for c in text)
