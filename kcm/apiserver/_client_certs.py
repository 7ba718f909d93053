"""Client certificates: who a verified TLS peer is (kube's x509 authenticator).

The TLS layer asks for a certificate and, when one is sent, checks it against the client CA
(``ssl.CERT_OPTIONAL``: a request without one goes on to the other authenticators, one signed
by another CA fails the handshake, as with kube-apiserver); :mod:`kcm._peer_certificate`
hands it to the request. The user is the certificate's subject: CN is the name, each O a
group (kube's ``CommonNameUserConversion``).
"""

from __future__ import annotations

import functools

from kcm._peer_certificate import peer_certificate

from ._requester import Requester

__all__ = ["peer_certificate", "user_from_certificate"]


@functools.lru_cache(maxsize=256)
def user_from_certificate(der: bytes) -> Requester | None:
    """CN as the user name, the O values as groups; None without a CN (cached: a client
    sends the same certificate on every connection)."""
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    subject = x509.load_der_x509_certificate(der).subject
    names = subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    if not names or not names[0].value:
        return None
    groups = tuple(str(a.value) for a in subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME))
    return Requester(str(names[0].value), groups)
