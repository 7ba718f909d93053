"""The cluster's root CA bundle, as the service-account controllers publish it.

kube-controller-manager's ``--root-ca-file`` (a PEM bundle, checked to hold certificates), or
without it the CA its own kubeconfig trusts. The ``serviceaccount-token`` controller puts it
into token Secrets as ``ca.crt``; ``root-ca-cert-publisher`` into every namespace's
``kube-root-ca.crt`` ConfigMap.
"""

from __future__ import annotations

from pathlib import Path

from kcm._extras import require
from kcm.client import ClientConfig
from kcm.errors import ConfigError

__all__ = ["read_root_ca", "root_ca"]


def read_root_ca(path: str | Path) -> bytes:
    """The PEM bundle in ``path`` (kube's ``readCA``).

    Raises:
        ConfigError: the file cannot be read or holds no PEM certificate.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read --root-ca-file: {exc}", path=str(path)) from exc
    try:
        x509 = require("cryptography.x509", extra="controllers", feature="--root-ca-file")
        x509.load_pem_x509_certificates(data)
    except ValueError as exc:
        raise ConfigError(
            f"--root-ca-file holds no valid PEM certificate: {exc}", path=str(path)
        ) from exc
    return data


def root_ca(root_ca_file: str | Path | None, config: ClientConfig) -> bytes:
    """``root_ca_file``'s bundle if given, else the CA ``config`` trusts (its
    ``certificate-authority-data`` or ``certificate-authority`` file), else ``b""``: a client
    that trusts the system roots or skips verification has no CA to hand out, and kube then
    publishes an empty ``ca.crt`` too.

    Raises:
        ConfigError: ``root_ca_file`` is unreadable or not PEM certificates.
    """
    if root_ca_file:
        return read_root_ca(root_ca_file)
    if config.certificate_authority_data:
        return bytes(config.certificate_authority_data)
    if config.certificate_authority:
        try:
            return Path(config.certificate_authority).read_bytes()
        except OSError as exc:
            raise ConfigError(
                f"cannot read the client's certificate-authority: {exc}",
                path=config.certificate_authority,
            ) from exc
    return b""
