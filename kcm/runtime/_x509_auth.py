"""Client-certificate and front-proxy authentication of the secure port, as kube's.

kube-controller-manager's ``--client-ca-file`` authenticates a certificate issued by that CA
as user CN with groups O (no CN: no user); its ``--requestheader-client-ca-file`` lets a front
proxy whose certificate that CA issued (with a CN in ``--requestheader-allowed-names``, when
given) name the user in request headers (``X-Remote-User``, ``X-Remote-Group``,
``X-Remote-Extra-<key>`` by default). The TLS layer has already checked the chain, validity and
client-auth usage against both CAs (``ssl.CERT_OPTIONAL``); what is left is which CA issued
it, and the names. A certificate the CA did not issue, or a proxy not in the allowed names, is
:class:`CertificateRejected` (kube's authenticator error: 401 unless another one succeeds).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, final
from urllib.parse import unquote

from kcm.errors import ConfigError

from ._user import User

if TYPE_CHECKING:
    from cryptography import x509

__all__ = [
    "CertificateRejected",
    "ClientCertAuthenticator",
    "FrontProxyAuthenticator",
    "load_ca_bundle",
]

Headers = Sequence[tuple[str, str]]
"""A request's headers in order, names lower-cased (ASGI's), repeated names kept."""


@final
class CertificateRejected(Exception):
    """A client certificate that does not authenticate (kube: an authenticator's error)."""


def load_ca_bundle(path: str, flag: str) -> tuple[x509.Certificate, ...]:
    """The CA certificates of a PEM bundle (``flag`` names it in errors).

    Raises:
        ConfigError: unreadable, or no PEM certificate in it.
    """
    from cryptography import x509

    try:
        data = Path(path).read_bytes()
        cas = tuple(x509.load_pem_x509_certificates(data))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{flag} {path}: not a readable PEM CA bundle: {exc}") from exc
    return cas


@functools.lru_cache(maxsize=256)
def _certificate(der: bytes) -> x509.Certificate:
    from cryptography import x509

    return x509.load_der_x509_certificate(der)


def _issued_by(cert: x509.Certificate, cas: Sequence[x509.Certificate]) -> bool:
    """Whether one of ``cas`` issued and signed ``cert`` (the TLS layer checked the rest)."""
    from cryptography.exceptions import InvalidSignature

    for ca in cas:
        try:
            cert.verify_directly_issued_by(ca)
        except (ValueError, TypeError, InvalidSignature):  # other issuer, key type, signature
            continue
        return True
    return False


def _common_name(cert: x509.Certificate) -> str:
    from cryptography.x509.oid import NameOID

    names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(names[0].value) if names else ""


def _verified(der: bytes, cas: Sequence[x509.Certificate], what: str) -> x509.Certificate:
    try:
        cert = _certificate(der)
    except ValueError as exc:
        raise CertificateRejected(f"unparseable client certificate: {exc}") from exc
    if not _issued_by(cert, cas):
        raise CertificateRejected(
            f"verifying certificate with subject {cert.subject.rfc4514_string()!r} failed: "
            f"not issued by the {what}"
        )
    return cert


@final
class ClientCertAuthenticator:
    """``--client-ca-file``: a certificate the CA issued is user CN in groups O."""

    def __init__(self, cas: Sequence[x509.Certificate]) -> None:
        self._cas = tuple(cas)

    def authenticate(self, certificate: bytes | None, headers: Headers = ()) -> User | None:
        """The certificate's user; None without a certificate or without a CN.

        Raises:
            CertificateRejected: the CA did not issue it.
        """
        if certificate is None:
            return None
        cert = _verified(certificate, self._cas, "client CA (--client-ca-file)")
        name = _common_name(cert)
        if not name:
            return None
        from cryptography.x509.oid import NameOID

        groups = cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
        return User(name, tuple(str(g.value) for g in groups))


@dataclass(frozen=True)
class _HeaderNames:
    user: tuple[str, ...]
    group: tuple[str, ...]
    extra_prefixes: tuple[str, ...]


@final
class FrontProxyAuthenticator:
    """``--requestheader-*``: a front proxy's certificate lets its headers name the user.

    Args:
        cas: ``--requestheader-client-ca-file``.
        allowed_names: CNs the proxy's certificate may have (empty: any).
        username_headers: the first non-empty one is the user (none: no user).
        group_headers: every non-empty value of each is a group.
        extra_headers_prefixes: ``<prefix><key>`` headers are the user's extra ``key``
            (lower-cased, %-decoded).
    """

    def __init__(
        self,
        cas: Sequence[x509.Certificate],
        *,
        allowed_names: Sequence[str] = (),
        username_headers: Sequence[str] = ("x-remote-user",),
        group_headers: Sequence[str] = ("x-remote-group",),
        extra_headers_prefixes: Sequence[str] = ("x-remote-extra-",),
    ) -> None:
        self._cas = tuple(cas)
        self._allowed = frozenset(allowed_names)
        self._names = _HeaderNames(
            _lowered(username_headers), _lowered(group_headers), _lowered(extra_headers_prefixes)
        )

    def authenticate(self, certificate: bytes | None, headers: Headers) -> User | None:
        """The user the proxy's headers name; None without a certificate or a user header.

        Raises:
            CertificateRejected: the CA did not issue it, or its CN is not allowed.
        """
        if certificate is None:
            return None
        cert = _verified(certificate, self._cas, "front proxy CA (--requestheader-client-ca-file)")
        name = _common_name(cert)
        if self._allowed and name not in self._allowed:
            raise CertificateRejected(f"x509: subject with cn={name} is not in the allowed list")
        return _user_from_headers(headers, self._names)


def _lowered(names: Sequence[str]) -> tuple[str, ...]:
    return tuple(n.strip().lower() for n in names if n.strip())


def _user_from_headers(headers: Headers, names: _HeaderNames) -> User | None:
    """kube's request-header user: the first user header whose first value is not empty;
    every non-empty group value in header order; extras by prefix (prefixes in order, each
    key's values appended)."""
    firsts = (next((v for n, v in headers if n == wanted), "") for wanted in names.user)
    user = next((v for v in firsts if v), "")
    if not user:
        return None
    groups = tuple(v for wanted in names.group for n, v in headers if n == wanted and v)
    extra: dict[str, list[str]] = {}
    for prefix in names.extra_prefixes:
        for name, value in headers:
            if name.startswith(prefix):
                extra.setdefault(unquote(name[len(prefix) :]), []).append(value)
    return User(user, groups, extra=tuple(sorted((k, tuple(v)) for k, v in extra.items())))
