"""``--root-ca-file`` and the client's CA: what the service-account controllers hand out."""

from __future__ import annotations

from pathlib import Path

import pytest

from kcm.client import ClientConfig
from kcm.controllerkit import read_root_ca, root_ca
from kcm.errors import ConfigError
from tests.integration.controllers.serviceaccounts.sa_harness import certificate_pem


def test_the_file_wins_then_the_clients_ca_then_nothing(tmp_path: Path) -> None:
    pem = certificate_pem()
    ca_file = tmp_path / "ca.crt"
    ca_file.write_bytes(pem)
    with_ca = ClientConfig(server="https://x", certificate_authority_data=b"client ca")
    assert root_ca(ca_file, with_ca) == pem
    assert root_ca(None, with_ca) == b"client ca"
    from_file = ClientConfig(server="https://x", certificate_authority=str(ca_file))
    assert root_ca(None, from_file) == pem
    assert root_ca(None, ClientConfig(server="http://x")) == b""


def test_a_file_without_certificates_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "ca.crt"
    bad.write_text("not a certificate\n")
    with pytest.raises(ConfigError, match="no valid PEM certificate"):
        read_root_ca(bad)
    with pytest.raises(ConfigError, match="cannot read"):
        read_root_ca(tmp_path / "missing.crt")
