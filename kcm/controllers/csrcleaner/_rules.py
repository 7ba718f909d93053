"""When a CertificateSigningRequest is garbage (kube's ``cleaner.go``): issued and approved more
than an hour ago, denied or failed more than an hour ago, pending (no condition) for a day, or
issued with a certificate that has expired."""

from __future__ import annotations

from datetime import datetime, timedelta

from cryptography import x509

from kcm.models.certificates_v1 import CertificateSigningRequest

__all__ = [
    "APPROVED_EXPIRATION",
    "DENIED_EXPIRATION",
    "PENDING_EXPIRATION",
    "POLLING_INTERVAL",
    "cleanup_reason",
]

POLLING_INTERVAL = timedelta(hours=1)
APPROVED_EXPIRATION = timedelta(hours=1)
DENIED_EXPIRATION = timedelta(hours=1)
"""Also for Failed requests, as kube."""
PENDING_EXPIRATION = timedelta(hours=24)


def _older_than(t: datetime | None, age: timedelta, now: datetime) -> bool:
    return t is not None and t - now < -age


def _certificate_expired(pem: bytes, now: datetime) -> bool:
    """The first certificate of ``pem`` has expired; False when there is none to read."""
    try:
        cert = x509.load_pem_x509_certificate(pem)
    except ValueError:
        return False
    return now > cert.not_valid_after_utc


def cleanup_reason(csr: CertificateSigningRequest, now: datetime) -> str | None:
    """Why ``csr`` should be deleted at ``now`` (kube's log text), or None to keep it."""
    conditions = (csr.status.conditions if csr.status else None) or ()
    certificate = (csr.status.certificate if csr.status else None) or b""
    for c in conditions:
        approved_long_ago = _older_than(c.last_update_time, APPROVED_EXPIRATION, now)
        if c.type == "Approved" and certificate and approved_long_ago:
            return "it is more than 1h0m0s old and approved"
    for c in conditions:
        if c.type == "Denied" and _older_than(c.last_update_time, DENIED_EXPIRATION, now):
            return "it is more than 1h0m0s old and denied"
    for c in conditions:
        if c.type == "Failed" and _older_than(c.last_update_time, DENIED_EXPIRATION, now):
            return "it is more than 1h0m0s old and failed"
    if not conditions and _older_than(csr.metadata.creation_timestamp, PENDING_EXPIRATION, now):
        return "it is more than 24h0m0s old and unhandled"
    approved = any(c.type == "Approved" for c in conditions)
    if certificate and approved and _certificate_expired(certificate, now):
        return "the associated certificate is expired"
    return None
