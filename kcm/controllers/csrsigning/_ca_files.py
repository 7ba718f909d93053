"""A CA read from its files, read again whenever they change (kube's ``caProvider``: a
rotated signing CA is used without a restart)."""

from __future__ import annotations

from pathlib import Path

import anyio

from kcm.errors import ConfigError

from ._authority import CertificateAuthority

__all__ = ["CAFiles"]


class CAFiles:
    """The CA in ``cert_file`` and ``key_file``; loaded at once, so that a bad file stops
    the controller from starting.

    Raises:
        ConfigError: a file cannot be read or used.
    """

    def __init__(self, cert_file: str | Path, key_file: str | Path) -> None:
        self.cert_file = Path(cert_file)
        self.key_file = Path(key_file)
        self._ca = CertificateAuthority.load(self.cert_file, self.key_file)

    def __repr__(self) -> str:
        return f"<CAFiles {self.cert_file} {self.key_file}>"

    async def current(self) -> CertificateAuthority:
        """The CA as the files hold it now; the last good one if they cannot be read or
        used any more (kube keeps signing with it, and logs)."""
        try:
            cert_pem = await anyio.Path(self.cert_file).read_bytes()
            key_pem = await anyio.Path(self.key_file).read_bytes()
        except OSError:
            return self._ca
        if cert_pem != self._ca.cert_pem or key_pem != self._ca.key_pem:
            try:
                self._ca = CertificateAuthority.from_pem(
                    cert_pem, key_pem, name=f"{self.cert_file}::{self.key_file}"
                )
            except ConfigError:
                return self._ca
        return self._ca
