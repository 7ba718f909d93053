"""A signing CA (certificate and private key from PEM files) and kube's permissive signing
policy (``pkg/controller/certificates/authority``): the request's subject (in Go's attribute
order), names and key; the requested usages; backdated five minutes; never past the CA's own
expiry."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier

from kcm.errors import ConfigError

__all__ = [
    "BACKDATE",
    "SHORT",
    "CertificateAuthority",
    "SigningError",
    "go_subject",
    "key_usages",
]

BACKDATE = timedelta(minutes=5)
"""How far before now a certificate starts (clock skew between hosts)."""
SHORT = timedelta(hours=8)
"""Below this lifetime the backdate is not taken off the end (kube's ``Short``)."""

_KEY_USAGES = {
    "signing": "digital_signature",
    "digital signature": "digital_signature",
    "content commitment": "content_commitment",
    "key encipherment": "key_encipherment",
    "key agreement": "key_agreement",
    "data encipherment": "data_encipherment",
    "cert sign": "key_cert_sign",
    "crl sign": "crl_sign",
    "encipher only": "encipher_only",
    "decipher only": "decipher_only",
}
# In Go's x509.ExtKeyUsage order, which the extension lists them in.
_EXT_KEY_USAGES: dict[str, tuple[int, ObjectIdentifier]] = {
    "any": (0, ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE),
    "server auth": (1, ExtendedKeyUsageOID.SERVER_AUTH),
    "client auth": (2, ExtendedKeyUsageOID.CLIENT_AUTH),
    "code signing": (3, ExtendedKeyUsageOID.CODE_SIGNING),
    "email protection": (4, ExtendedKeyUsageOID.EMAIL_PROTECTION),
    "s/mime": (4, ExtendedKeyUsageOID.EMAIL_PROTECTION),
    "ipsec end system": (5, ObjectIdentifier("1.3.6.1.5.5.7.3.5")),
    "ipsec tunnel": (6, ObjectIdentifier("1.3.6.1.5.5.7.3.6")),
    "ipsec user": (7, ObjectIdentifier("1.3.6.1.5.5.7.3.7")),
    "timestamping": (8, ExtendedKeyUsageOID.TIME_STAMPING),
    "ocsp signing": (9, ExtendedKeyUsageOID.OCSP_SIGNING),
    "microsoft sgc": (10, ObjectIdentifier("1.3.6.1.4.1.311.10.3.3")),
    "netscape sgc": (11, ObjectIdentifier("2.16.840.1.113730.4.1")),
}
_SERIAL_LIMIT = 1 << 128
# Go's pkix.Name.ToRDNSequence order; a certificate's subject is rebuilt from these (other
# attribute types of the request are not carried over, as Go's template does not carry them).
_SUBJECT_ORDER = (
    NameOID.COUNTRY_NAME,
    NameOID.ORGANIZATION_NAME,
    NameOID.ORGANIZATIONAL_UNIT_NAME,
    NameOID.LOCALITY_NAME,
    NameOID.STATE_OR_PROVINCE_NAME,
    NameOID.STREET_ADDRESS,
    NameOID.POSTAL_CODE,
    NameOID.SERIAL_NUMBER,
    NameOID.COMMON_NAME,
)


class SigningError(Exception):
    """The CA cannot sign this request (unknown usages, an expired CA); retried later."""


def key_usages(usages: Sequence[str]) -> tuple[x509.KeyUsage | None, list[ObjectIdentifier]]:
    """The KeyUsage extension (None: no bit set) and the extended key usages, in Go's order,
    each once, for a CSR's ``spec.usages``.

    Raises:
        SigningError: a usage kube does not know.
    """
    bits: set[str] = set()
    extended: dict[ObjectIdentifier, int] = {}
    unknown = []
    for usage in usages:
        if usage in _KEY_USAGES:
            bits.add(_KEY_USAGES[usage])
        elif usage in _EXT_KEY_USAGES:
            order, oid = _EXT_KEY_USAGES[usage]
            extended[oid] = order
        else:
            unknown.append(usage)
    if unknown:
        raise SigningError(f"unrecognized usage values: {unknown!r}")
    key_usage = None
    if bits:
        key_usage = x509.KeyUsage(
            **{name: name in bits for name in sorted(set(_KEY_USAGES.values()))}
        )
    return key_usage, sorted(extended, key=lambda oid: extended[oid])


def go_subject(subject: x509.Name) -> x509.Name:
    """``subject`` as Go writes a certificate's subject from a request's (``pkix.Name``):
    country, organization, unit, locality, province, street, postal code, serial number, then
    common name; the values of one type in one RDN."""
    rdns = []
    for oid in _SUBJECT_ORDER:
        values = subject.get_attributes_for_oid(oid)
        if oid in (NameOID.SERIAL_NUMBER, NameOID.COMMON_NAME):
            values = values[-1:]  # Go keeps one of these, the last
        if values:
            rdns.append(x509.RelativeDistinguishedName(values))
    return x509.Name(rdns)


def _hash_for(key: object) -> hashes.HashAlgorithm | None:
    """The digest Go's x509 signs with for the CA's key type."""
    if isinstance(key, ec.EllipticCurvePrivateKey):
        size = key.curve.key_size
        if size >= 521:
            return hashes.SHA512()
        if size >= 384:
            return hashes.SHA384()
        return hashes.SHA256()
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return None
    return hashes.SHA256()


_SigningKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey


@dataclass(frozen=True)
class CertificateAuthority:
    """One CA: its certificate and the key that signs with it."""

    certificate: x509.Certificate
    key: _SigningKey
    cert_pem: bytes
    key_pem: bytes

    @classmethod
    def from_pem(cls, cert_pem: bytes, key_pem: bytes, *, name: str = "") -> CertificateAuthority:
        """The CA of one PEM certificate and a PEM RSA, ECDSA or Ed25519 private key.

        Raises:
            ConfigError: not exactly one certificate, or no usable key (``name`` says where).
        """
        try:
            certs = x509.load_pem_x509_certificates(cert_pem)
        except ValueError as exc:
            raise ConfigError(f"error reading CA cert file {name!r}: {exc}") from exc
        if len(certs) != 1:
            raise ConfigError(
                f"error reading CA cert file {name!r}: expected 1 certificate, found {len(certs)}"
            )
        try:
            key = serialization.load_pem_private_key(key_pem, password=None)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"error reading CA key file {name!r}: {exc}") from exc
        if not isinstance(
            key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey
        ):
            raise ConfigError(f"error reading CA key file {name!r}: key cannot sign certificates")
        return cls(certs[0], key, cert_pem, key_pem)

    @classmethod
    def load(cls, cert_file: str | Path, key_file: str | Path) -> CertificateAuthority:
        """The CA in ``cert_file`` and ``key_file``.

        Raises:
            ConfigError: a file cannot be read or holds no usable certificate or key.
        """
        try:
            cert_pem, key_pem = Path(cert_file).read_bytes(), Path(key_file).read_bytes()
        except OSError as exc:
            raise ConfigError(f"error reading CA cert file {str(cert_file)!r}: {exc}") from exc
        return cls.from_pem(cert_pem, key_pem, name=f"{cert_file}::{key_file}")

    def sign(
        self,
        request: x509.CertificateSigningRequest,
        usages: Sequence[str],
        ttl: timedelta,
        now: datetime,
    ) -> bytes:
        """A PEM certificate for ``request`` valid ``ttl`` from ``now`` (kube's
        ``PermissiveSigningPolicy``: from ``now - 5m``; to ``now + ttl``, less the backdate for
        lifetimes of 8 h or more; never past the CA's ``notAfter``).

        Raises:
            SigningError: the request's signature is bad, a usage is unknown or the CA expired.
        """
        if not request.is_signature_valid:
            raise SigningError("unable to verify certificate request signature")
        key_usage, extended = key_usages(usages)
        ca_end = self.certificate.not_valid_after_utc
        start = now - BACKDATE
        end = now + ttl if ttl < SHORT else now + ttl - BACKDATE
        end = min(end, ca_end)
        if start >= ca_end:
            raise SigningError(f"the signer has expired: NotAfter={ca_end}")
        if now >= ca_end:
            raise SigningError(
                f"refusing to sign a certificate that expired in the past: NotAfter={ca_end}"
            )
        builder = (
            x509.CertificateBuilder()
            .subject_name(go_subject(request.subject))
            .issuer_name(self.certificate.subject)
            .public_key(request.public_key())
            .serial_number(secrets.randbelow(_SERIAL_LIMIT) or 1)
            .not_valid_before(start)
            .not_valid_after(end)
        )
        if key_usage is not None:
            builder = builder.add_extension(key_usage, critical=True)
        if extended:
            builder = builder.add_extension(x509.ExtendedKeyUsage(extended), critical=False)
        builder = builder.add_extension(
            x509.BasicConstraints(ca=False, path_length=None), critical=True
        )
        try:
            ski = self.certificate.extensions.get_extension_for_class(x509.SubjectKeyIdentifier)
            builder = builder.add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski.value),
                critical=False,
            )
        except x509.ExtensionNotFound:
            pass
        try:
            names = request.extensions.get_extension_for_class(x509.SubjectAlternativeName)
            builder = builder.add_extension(names.value, critical=len(request.subject) == 0)
        except x509.ExtensionNotFound:
            pass
        cert = builder.sign(self.key, _hash_for(self.key))  # type: ignore[arg-type]
        return cert.public_bytes(serialization.Encoding.PEM)
