"""Client certificates for the secure port's tests: a CA and the certificates it issues
(user CN, groups O, client-auth usage), as PEM files for TLS clients."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from tests.helpers.certificates import make_ca

_NOW = datetime.datetime.now(datetime.UTC)


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _subject(common_name: str, organizations: tuple[str, ...] = ()) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)] if common_name else []
    attributes += [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    return x509.Name(attributes)


@dataclass(frozen=True)
class Issued:
    """A certificate and its key."""

    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey

    @property
    def der(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.DER)

    def write(self, directory: Path, name: str) -> tuple[str, str]:
        """``name.crt`` and ``name.key`` in ``directory``."""
        cert, key = directory / f"{name}.crt", directory / f"{name}.key"
        cert.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))
        key.write_bytes(_pem_key(self.key))
        return str(cert), str(key)


@dataclass(frozen=True)
class ClientCA:
    """A CA issuing client certificates."""

    issued: Issued

    @classmethod
    def create(cls, name: str) -> ClientCA:
        """A self-signed CA (:func:`tests.helpers.certificates.make_ca`), valid from an hour
        ago for 30 days."""
        ca = make_ca(name, start=_NOW - datetime.timedelta(hours=1), days=30)
        key = serialization.load_pem_private_key(ca.key_pem, password=None)
        assert isinstance(key, ec.EllipticCurvePrivateKey)
        return cls(Issued(ca.certificate, key))

    @property
    def certificate(self) -> x509.Certificate:
        return self.issued.cert

    def write(self, directory: Path, name: str) -> str:
        """The CA certificate as ``name.crt``."""
        return self.issued.write(directory, name)[0]

    def client(self, common_name: str, *organizations: str) -> Issued:
        """A client certificate for user ``common_name`` in groups ``organizations``."""
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (
            x509.CertificateBuilder()
            .subject_name(_subject(common_name, organizations))
            .issuer_name(self.issued.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(_NOW - datetime.timedelta(hours=1))
            .not_valid_after(_NOW + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(True, False, True, False, False, False, False, False, False),
                critical=True,
            )
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self.issued.key.public_key()),
                critical=False,
            )
            .sign(self.issued.key, hashes.SHA256())
        )
        return Issued(cert, key)
