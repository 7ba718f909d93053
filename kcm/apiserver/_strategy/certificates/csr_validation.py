"""What kube-apiserver checks of a CertificateSigningRequest (``pkg/apis/certificates/validation``):
a PEM CSR whose signature verifies, known usages once each, a ``domain/path`` signer, a
duration of at least ten minutes, well-formed conditions and PEM certificates; on update, which
conditions and whether the certificate each write path may change."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from cryptography import x509

from ..._field_errors import (
    Cause,
    duplicate,
    forbidden,
    invalid,
    invalid_shown,
    not_supported,
    required,
)
from ..._names import dns1123_subdomain
from ..._store import Obj

__all__ = ["VALID_USAGES", "decoded_bytes", "validate_csr", "validate_csr_update"]

VALID_USAGES = (
    "any",
    "cert sign",
    "client auth",
    "code signing",
    "content commitment",
    "crl sign",
    "data encipherment",
    "decipher only",
    "digital signature",
    "email protection",
    "encipher only",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "key agreement",
    "key encipherment",
    "microsoft sgc",
    "netscape sgc",
    "ocsp signing",
    "s/mime",
    "server auth",
    "signing",
    "timestamping",
)
_LEGACY_SIGNER = "kubernetes.io/legacy-unknown"
_TRUE_ONLY = ("Approved", "Denied", "Failed")


def decoded_bytes(value: Any) -> bytes:
    """A ``[]byte`` field's stored (base64) text as bytes; b"" when absent or not base64."""
    if not isinstance(value, str) or not value:
        return b""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return b""


def _spec(obj: Obj) -> dict[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _status(obj: Obj) -> dict[str, Any]:
    status = obj.get("status")
    return status if isinstance(status, dict) else {}


def _conditions(obj: Obj) -> list[dict[str, Any]]:
    found = _status(obj).get("conditions")
    return [c for c in found if isinstance(c, dict)] if isinstance(found, list) else []


def _request_error(pem: bytes) -> str | None:
    if not pem:
        return "PEM block type must be CERTIFICATE REQUEST"
    try:
        csr = x509.load_pem_x509_csr(pem)
    except ValueError:
        return "PEM block type must be CERTIFICATE REQUEST"
    if not csr.is_signature_valid:
        return "x509: signature verification failure"
    return None


def _certificate_error(pem: bytes) -> str | None:
    if not pem:
        return None
    text = pem.decode("latin-1")
    if "-----BEGIN " not in text:
        return "must contain at least one CERTIFICATE PEM block"
    for block in text.split("-----BEGIN ")[1:]:
        kind = block.split("-----", 1)[0]
        if kind != "CERTIFICATE":
            return f"only CERTIFICATE PEM blocks are allowed, found {kind!r}".replace("'", '"')
    try:
        x509.load_pem_x509_certificates(pem)
    except ValueError as exc:
        return str(exc)
    return None


def _signer_errors(name: Any) -> list[Cause]:
    path = "spec.signerName"
    if not name:
        return [required(path, "signerName must be provided")]
    segments = str(name).split("/")
    if len(segments) != 2 or not segments[1]:
        return [
            invalid(
                path,
                name,
                "must be a fully qualified domain and path of the form 'example.com/signer-name'",
            )
        ]
    if "." not in segments[0]:
        return [
            invalid(
                path, segments[0], "should be a domain with at least two segments separated by dots"
            )
        ]
    problems = dns1123_subdomain(segments[0])
    return [invalid(path, segments[0], p) for p in problems]


def _lenient(old: Obj | None, test: Any) -> bool:
    """kube tolerates a problem on update that the stored object already has."""
    return old is not None and bool(test(old))


def validate_csr(obj: Obj, old: Obj | None = None) -> list[Cause]:
    """Field errors of ``obj`` (created, or written over ``old``)."""
    spec = _spec(obj)
    causes: list[Cause] = []
    error = _request_error(decoded_bytes(spec.get("request")))
    if error is not None:
        causes.append(invalid_shown("spec.request", "[]byte{...}", error))
    usages = spec.get("usages") or []
    if not usages:
        causes.append(required("spec.usages", "usages must be provided"))
    if not _lenient(old, lambda o: set(_spec(o).get("usages") or ()) - set(VALID_USAGES)):
        for i, usage in enumerate(usages):
            if usage not in VALID_USAGES:
                causes.append(not_supported(f"spec.usages[{i}]", usage, list(VALID_USAGES)))
    old_usages = _spec(old).get("usages") or [] if old is not None else []
    if not (old is not None and len(set(old_usages)) != len(old_usages)):
        seen: set[Any] = set()
        for i, usage in enumerate(usages):
            if usage in seen:
                causes.append(duplicate(f"spec.usages[{i}]", usage))
            seen.add(usage)
    signer = spec.get("signerName")
    if signer == _LEGACY_SIGNER and not _lenient(
        old, lambda o: _spec(o).get("signerName") == _LEGACY_SIGNER
    ):
        causes.append(
            invalid(
                "spec.signerName",
                signer,
                "the legacy signerName is not allowed via this API version",
            )
        )
    elif signer != _LEGACY_SIGNER:
        causes.extend(_signer_errors(signer))
    seconds = spec.get("expirationSeconds")
    if isinstance(seconds, int) and seconds < 600:
        causes.append(
            invalid(
                "spec.expirationSeconds",
                seconds,
                "may not specify a duration less than 600 seconds (10 minutes)",
            )
        )
    causes.extend(_condition_errors(obj, old))
    certificate = _status(obj).get("certificate")
    unchanged = old is not None and certificate == _status(old).get("certificate")
    if not unchanged:
        error = _certificate_error(decoded_bytes(certificate))
        if error is not None:
            causes.append(invalid("status.certificate", "<certificate data>", error))
    return causes


def _types(obj: Obj) -> list[Any]:
    return [c.get("type") for c in _conditions(obj)]


def _condition_errors(obj: Obj, old: Obj | None) -> list[Cause]:
    old_types = _types(old) if old is not None else []
    both_allowed = "Approved" in old_types and "Denied" in old_types
    dupes_allowed = len(set(old_types)) != len(old_types)
    empty_allowed = "" in old_types or None in old_types
    causes: list[Cause] = []
    seen: set[Any] = set()
    approved = denied = False
    for i, c in enumerate(_conditions(obj)):
        path = f"status.conditions[{i}]"
        kind, status = c.get("type"), c.get("status")
        if not kind and not empty_allowed:
            causes.append(required(f"{path}.type"))
        allowed = ["True"] if kind in _TRUE_ONLY else ["False", "True", "Unknown"]
        if not status:
            causes.append(required(f"{path}.status"))
        elif status not in allowed:
            causes.append(not_supported(f"{path}.status", status, allowed))
        if not both_allowed:
            exclusive = "Approved and Denied conditions are mutually exclusive"
            if kind == "Approved":
                approved = True
                if denied:
                    causes.append(invalid(f"{path}.type", kind, exclusive))
            elif kind == "Denied":
                denied = True
                if approved:
                    causes.append(invalid(f"{path}.type", kind, exclusive))
        if not dupes_allowed:
            if kind in seen:
                causes.append(duplicate(f"{path}.type", kind))
            seen.add(kind)
    return causes


def _of_type(obj: Obj, kind: str) -> list[dict[str, Any]]:
    return [c for c in _conditions(obj) if c.get("type") == kind]


def validate_csr_update(
    new: Obj, old: Obj, *, approval: bool = False, certificate: bool = False
) -> list[Cause]:
    """Field errors of writing ``new`` over ``old``: ``approval`` (``/approval``) may add
    Approved/Denied, ``certificate`` (``/status``) may set an empty certificate; no path
    removes an Approved, Denied or Failed condition."""
    causes = validate_csr(new, old)
    for kind in ("Approved", "Denied", "Failed"):
        if len(_of_type(new, kind)) < len(_of_type(old, kind)):
            causes.append(
                forbidden(
                    "status.conditions", f'updates may not remove a condition of type "{kind}"'
                )
            )
    if not approval:
        for kind in ("Approved", "Denied"):
            before, after = _of_type(old, kind), _of_type(new, kind)
            if len(after) > len(before):
                causes.append(
                    forbidden(
                        "status.conditions", f'updates may not add a condition of type "{kind}"'
                    )
                )
            elif len(after) == len(before) and after != before:
                causes.append(
                    forbidden(
                        "status.conditions", f'updates may not modify a condition of type "{kind}"'
                    )
                )
    before_cert, after_cert = _status(old).get("certificate"), _status(new).get("certificate")
    if (before_cert or None) != (after_cert or None):
        if not certificate:
            causes.append(
                forbidden("status.certificate", "updates may not set certificate content")
            )
        elif before_cert:
            causes.append(
                forbidden(
                    "status.certificate", "updates may not modify existing certificate content"
                )
            )
    return causes
