"""Test CAs and certificate requests for the certificate controllers' tests."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

NOT_BEFORE = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


@dataclass(frozen=True)
class SigningCA:
    cert_pem: bytes
    key_pem: bytes

    @property
    def certificate(self) -> x509.Certificate:
        return x509.load_pem_x509_certificate(self.cert_pem)

    def write(self, directory: Path, name: str = "ca") -> tuple[Path, Path]:
        cert, key = directory / f"{name}.crt", directory / f"{name}.key"
        cert.write_bytes(self.cert_pem)
        key.write_bytes(self.key_pem)
        return cert, key

    def verifies(self, cert_pem: bytes) -> bool:
        """Whether ``cert_pem`` was issued and signed by this CA."""
        cert = x509.load_pem_x509_certificate(cert_pem)
        try:
            cert.verify_directly_issued_by(self.certificate)
        except (ValueError, TypeError, Exception):
            return False
        return True


def make_ca(
    name: str = "test-ca", *, days: int = 3650, start: datetime.datetime = NOT_BEFORE
) -> SigningCA:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(start)
        .not_valid_after(start + datetime.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return SigningCA(
        cert.public_bytes(serialization.Encoding.PEM),
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )


def make_csr(
    common_name: str = "system:node:node-1",
    organizations: tuple[str, ...] = ("system:nodes",),
    *,
    dns_names: tuple[str, ...] = (),
    ips: tuple[str, ...] = (),
) -> bytes:
    """A PEM PKCS#10 request with a fresh P-256 key."""
    key = ec.generate_private_key(ec.SECP256R1())
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    attributes += [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    builder = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(attributes))
    names: list[x509.GeneralName] = [x509.DNSName(d) for d in dns_names]
    names += [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)
