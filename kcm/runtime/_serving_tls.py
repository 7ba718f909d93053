"""The TLS context of the manager's secure port: given files, or a self-signed pair in memory.

kube-controller-manager generates a self-signed certificate in memory when it is given no
``--tls-cert-file``/``--tls-private-key-file`` (and no ``--cert-dir`` pair); scrapers and
probes then connect with verification off, as they do against the real one.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
import tempfile
from collections.abc import Sequence

from kcm._extras import require
from kcm.errors import ConfigError

__all__ = ["ask_for_client_certificates", "self_signed_context", "serving_context"]

_VALIDITY = datetime.timedelta(days=365)


def serving_context(cert_file: str, key_file: str) -> ssl.SSLContext:
    """A server context on a PEM certificate (chain) and key read from files.

    Raises:
        ConfigError: a file is unreadable or the pair does not match.
    """
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        ctx.load_cert_chain(cert_file, key_file)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(
            f"--tls-cert-file {cert_file} and --tls-private-key-file {key_file} are not a "
            f"usable PEM pair: {exc}"
        ) from exc
    return ctx


def ask_for_client_certificates(context: ssl.SSLContext, ca_files: Sequence[str]) -> None:
    """Ask TLS clients for a certificate (not require one) and verify one sent against
    ``ca_files`` (kube's client CA and front proxy CA).

    Unlike Go's TLS server, which takes any certificate and leaves verification to the
    authenticators (a stranger's certificate is then 401), Python's ``ssl`` can only verify
    during the handshake: a certificate no CA here issued fails the handshake.

    Raises:
        ConfigError: a CA file is unreadable or holds no certificate.
    """
    for path in ca_files:
        try:
            context.load_verify_locations(cafile=path)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(f"client CA file {path} is not a usable PEM bundle: {exc}") from exc
    context.verify_mode = ssl.CERT_OPTIONAL


def self_signed_context(host: str, names: Sequence[str] = ("localhost",)) -> ssl.SSLContext:
    """A server context on a fresh self-signed P-256 certificate for ``host`` and ``names``
    (kube's "Generated self-signed cert in-memory"; the key is never kept on disk)."""
    require("cryptography.x509", extra="server", feature="the secure port's certificate")
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{host}@{int(now.timestamp())}")])
    alt: list[x509.GeneralName] = [x509.DNSName(name) for name in names]
    for address in {host, "127.0.0.1"}:
        try:
            alt.append(x509.IPAddress(ipaddress.ip_address(address)))
        except ValueError:
            alt.append(x509.DNSName(address))
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + _VALIDITY)
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    # ssl loads a chain only from files: a private directory, removed as soon as it is read.
    with tempfile.TemporaryDirectory(prefix="kcm-serving-") as tmp:
        paths = (os.path.join(tmp, "tls.crt"), os.path.join(tmp, "tls.key"))
        blobs = (
            cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            ),
        )
        for path, data in zip(paths, blobs, strict=True):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        ctx.load_cert_chain(*paths)
    return ctx
