"""deploy/'s kustomize bases render (``kubectl kustomize``) and a server-side dry run of them
is accepted by the embedded API server with RBAC on."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import anyio
import pytest
import yaml

from kcm.apiserver import ApiServer

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.kubectl,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

DEPLOY = Path(__file__).resolve().parents[3] / "deploy"


def render(base: str) -> str:
    done = subprocess.run(
        ["kubectl", "kustomize", str(DEPLOY / base)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("base", ["controller-manager", "cloud-controller-manager"])
async def test_the_bases_render_and_the_server_accepts_them(base: str, tmp_path: Path) -> None:
    rendered = render(base)
    kinds = [doc["kind"] for doc in yaml.safe_load_all(rendered)]
    assert "Deployment" in kinds
    assert "ServiceAccount" in kinds
    async with ApiServer(token="admin-token", tls=True) as server:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(yaml.safe_dump(server.kubeconfig()))
        done = await anyio.run_process(
            ["kubectl", f"--kubeconfig={kubeconfig}", "apply", "--dry-run=server", "-f", "-"],
            input=rendered.encode(),
            check=False,
        )
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr.decode() + out
    assert out.count("(server dry run)") == len(kinds)


def test_the_controller_manager_runs_as_kube_controller_manager_does() -> None:
    docs = list(yaml.safe_load_all(render("controller-manager")))
    (deployment,) = [d for d in docs if d["kind"] == "Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert "--use-service-account-credentials=true" in container["args"]
    assert "--leader-elect=true" in container["args"]
    assert pod["serviceAccountName"] == "kcm"
    assert pod["securityContext"]["runAsNonRoot"] is True
    binding = next(
        d for d in docs if d["kind"] == "ClusterRoleBinding" and d["metadata"]["name"] == "kcm"
    )
    assert binding["roleRef"]["name"] == "system:kube-controller-manager"
    lease = next(
        d for d in docs if d["kind"] == "Role" and d["metadata"]["name"] == "kcm:leader-election"
    )
    assert lease["rules"][0]["resourceNames"] == ["kcm"]
