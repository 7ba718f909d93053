"""What the differential suite keeps of an issued certificate: who issued it to whom, for what
and for how long, and whether it verifies against the suite's signing CA (``data/``), which both
controller managers sign with. The bytes differ on every signing (serial, key, times)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from cryptography import x509

__all__ = ["SIGNING_CA_CERT", "SIGNING_CA_KEY", "certificate_summary"]

SIGNING_CA_CERT = Path(__file__).parent / "data" / "signing-ca.crt"
SIGNING_CA_KEY = Path(__file__).parent / "data" / "signing-ca.key"


def _extension(cert: x509.Certificate, kind: type[x509.ExtensionType]) -> Any:
    try:
        return cert.extensions.get_extension_for_class(kind).value
    except x509.ExtensionNotFound:
        return None


def certificate_summary(encoded: str) -> dict[str, Any]:
    """The decided parts of a ``status.certificate`` (base64 of PEM)."""
    cert = x509.load_pem_x509_certificate(base64.b64decode(encoded))
    ca = x509.load_pem_x509_certificate(SIGNING_CA_CERT.read_bytes())
    try:
        cert.verify_directly_issued_by(ca)
        verifies = True
    except (ValueError, TypeError, Exception):
        verifies = False
    key_usage = _extension(cert, x509.KeyUsage)
    bits = []
    if key_usage is not None:
        for name in ("digital_signature", "key_encipherment", "content_commitment"):
            if getattr(key_usage, name):
                bits.append(name)
    extended = _extension(cert, x509.ExtendedKeyUsage)
    constraints = _extension(cert, x509.BasicConstraints)
    names = _extension(cert, x509.SubjectAlternativeName)
    return {
        "dnsNames": list(names.get_values_for_type(x509.DNSName)) if names else [],
        "ipAddresses": [str(ip) for ip in names.get_values_for_type(x509.IPAddress)]
        if names
        else [],
        "subject": cert.subject.rfc4514_string(),
        "issuer": cert.issuer.rfc4514_string(),
        "keyUsage": bits,
        "extKeyUsage": [oid.dotted_string for oid in extended or ()],
        "ca": None if constraints is None else constraints.ca,
        "lifetimeSeconds": int(
            (cert.not_valid_after_utc - cert.not_valid_before_utc).total_seconds()
        ),
        "verifiesAgainstSigningCA": verifies,
    }
