"""The deploy/ manifests probe the managers where they serve: HTTPS on their secure ports."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kcm.cli._ccm import CCM_PORT
from kcm.cli._flags import build_run_parser

DEPLOY = Path(__file__).resolve().parents[3] / "deploy"


def _probes(path: Path) -> list[dict[str, object]]:
    found = []
    for doc in yaml.safe_load_all(path.read_text()):
        if not doc or doc.get("kind") != "Deployment":
            continue
        for container in doc["spec"]["template"]["spec"]["containers"]:
            for key in ("livenessProbe", "readinessProbe", "startupProbe"):
                if key in container:
                    found.append(container[key]["httpGet"])
    return found


@pytest.mark.parametrize(
    ("manifest", "port"),
    [
        ("controller-manager/deployment.yaml", build_run_parser().get_default("secure_port")),
        ("cloud-controller-manager/deployment.yaml", CCM_PORT),
    ],
)
def test_probes_use_https_on_the_secure_port(manifest: str, port: int) -> None:
    probes = _probes(DEPLOY / manifest)
    assert probes
    for probe in probes:
        assert probe["scheme"] == "HTTPS"
        assert probe["port"] == port
