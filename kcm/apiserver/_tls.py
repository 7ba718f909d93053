"""The server's certificate authority: it signs the serving certificate and client
certificates (the administrator's, for the kubeconfig), and is kept in the data dir.

kube-apiserver is handed its certificates (``--tls-cert-file``, ``--client-ca-file``); kcm,
like kubeadm or minikube, makes its own CA the first time it starts with a data dir
(``<data-dir>/pki/ca.crt``, ``ca.key``: 0600) and reuses it on every restart, so kubeconfigs
written before stay valid. Without a data dir the CA lives in memory for the server's life.
Keys are ECDSA P-256; certificates are valid for ten years (CA) and one year (the others), and
the serving certificate is made afresh on every start (its names follow ``host``).
"""

from __future__ import annotations

import ipaddress
import stat
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kcm.clock import Clock

from ._data_dir import create_private, private_dir, write_private

__all__ = ["CertificateAuthority", "KeyPair", "load_or_create_key"]

_PEM = serialization.Encoding.PEM


@dataclass(frozen=True, slots=True)
class KeyPair:
    """A certificate and its private key, both PEM."""

    cert_pem: bytes
    key_pem: bytes


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(_PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def _private_pki(directory: Path) -> None:
    """``directory`` exists and is 0700 (kcm's own: a looser one is tightened)."""
    private_dir(directory, warn=False)
    if stat.S_IMODE(directory.stat().st_mode) & 0o077:
        directory.chmod(0o700)


def _write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to a file that is 0600 from its first byte, in a 0700 directory."""
    _private_pki(path.parent)
    write_private(path, data)


def _read_private(path: Path) -> bytes:
    """The bytes of a key file, tightened to 0600 (and its directory to 0700) first."""
    _private_pki(path.parent)
    create_private(path)
    return path.read_bytes()


def load_or_create_key(path: Path) -> ec.EllipticCurvePrivateKey:
    """The P-256 key kept at ``path``, made (mode 0600) the first time."""
    if path.exists():
        key = serialization.load_pem_private_key(_read_private(path), password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            raise ValueError(f"{path}: not an ECDSA private key")
        return key
    key = ec.generate_private_key(ec.SECP256R1())
    _write_private(path, _key_pem(key))
    return key


def _key_usage(*, ca: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=ca,
        crl_sign=ca,
        encipher_only=False,
        decipher_only=False,
    )


class CertificateAuthority:
    """A self-signed CA that signs serving and client certificates."""

    def __init__(self, key: ec.EllipticCurvePrivateKey, cert: x509.Certificate, clock: Clock):
        self.key = key
        self.cert = cert
        self.clock = clock

    @property
    def cert_pem(self) -> bytes:
        return self.cert.public_bytes(_PEM)

    @classmethod
    def generate(cls, clock: Clock) -> CertificateAuthority:
        key = ec.generate_private_key(ec.SECP256R1())
        now = clock.now() - timedelta(minutes=5)
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kcm-apiserver-ca")])
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now)
            .not_valid_after(now + timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(_key_usage(ca=True), critical=True)
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False
            )
            .sign(key, hashes.SHA256())
        )
        return cls(key, cert, clock)

    @classmethod
    def load_or_create(cls, directory: Path, clock: Clock) -> CertificateAuthority:
        """The CA kept in ``directory`` (``ca.crt``, ``ca.key``), made the first time."""
        cert_path, key_path = directory / "ca.crt", directory / "ca.key"
        if cert_path.exists() and key_path.exists():
            key = serialization.load_pem_private_key(_read_private(key_path), password=None)
            if not isinstance(key, ec.EllipticCurvePrivateKey):
                raise ValueError(f"{key_path}: not an ECDSA private key")
            return cls(key, x509.load_pem_x509_certificate(cert_path.read_bytes()), clock)
        ca = cls.generate(clock)
        _write_private(key_path, _key_pem(ca.key))
        _write_private(cert_path, ca.cert_pem)
        return ca

    def _sign(
        self,
        subject: x509.Name,
        usage: x509.ObjectIdentifier,
        names: list[x509.GeneralName] | None = None,
    ) -> KeyPair:
        key = ec.generate_private_key(ec.SECP256R1())
        now = self.clock.now() - timedelta(minutes=5)
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now)
            .not_valid_after(now + timedelta(days=365))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_key_usage(ca=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()),
                critical=False,
            )
        )
        if names:
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        cert = builder.sign(self.key, hashes.SHA256())
        return KeyPair(cert.public_bytes(_PEM), _key_pem(key))

    def serving(self, host: str) -> KeyPair:
        """A serving certificate for ``host``, localhost and 127.0.0.1."""
        names: list[x509.GeneralName] = [
            x509.DNSName("localhost"),
            x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        ]
        try:
            address = x509.IPAddress(ipaddress.ip_address(host))
            if address not in names:
                names.append(address)
        except ValueError:
            names.append(x509.DNSName(host))
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kcm-apiserver")])
        return self._sign(subject, ExtendedKeyUsageOID.SERVER_AUTH, names)

    def client(self, user: str, groups: tuple[str, ...] = ()) -> KeyPair:
        """A client certificate: CN ``user``, one O per group (what kube authenticates)."""
        attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups]
        attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, user))
        return self._sign(x509.Name(attributes), ExtendedKeyUsageOID.CLIENT_AUTH)
