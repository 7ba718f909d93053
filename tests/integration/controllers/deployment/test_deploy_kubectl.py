"""kubectl's rollout commands against the embedded server with kcm's Deployment controller
(the test plays the ReplicaSet controller and kubelet): ``rollout status`` reads the
conditions and counts, ``rollout undo`` patches the template back, ``rollout history`` lists
the revisions from the ReplicaSets' annotations."""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
import pytest

from kcm.apiserver import ApiServer
from kcm.controllers.deployment import REVISION_ANNOTATION
from kcm.models.apps_v1 import Deployment
from kcm.testing import eventually
from tests.integration.controllers.deployment.deploy_harness import (
    NS,
    complete,
    make_deployment,
    replica_sets,
    running,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]


async def kubectl(kubeconfig: Path, *args: str) -> str:
    result = await anyio.run_process(
        ["kubectl", "--kubeconfig", str(kubeconfig), "-n", NS, *args], check=False
    )
    out = result.stdout.decode() + result.stderr.decode()
    assert result.returncode == 0, out
    return out


async def test_deploy_kubectl_rollout_status_undo_and_history(
    api_server: ApiServer, tmp_path: Path
) -> None:
    kubeconfig = api_server.write_kubeconfig(tmp_path / "kubeconfig")
    async with running(api_server) as (client, _, _, _):
        api = client.api(Deployment, NS)
        await api.create(make_deployment(replicas=2))
        out = await kubectl(kubeconfig, "rollout", "status", "deployment/web", "--timeout=30s")
        assert 'deployment "web" successfully rolled out' in out
        [first] = await replica_sets(client)

        await kubectl(kubeconfig, "set", "image", "deployment/web", "app=nginx:2")
        out = await kubectl(kubeconfig, "rollout", "status", "deployment/web", "--timeout=30s")
        assert 'deployment "web" successfully rolled out' in out

        await kubectl(kubeconfig, "rollout", "undo", "deployment/web")

        async def undone() -> bool:
            d = await api.get("web")
            return complete(d) and (d.metadata.annotations or {}).get(REVISION_ANNOTATION) == "3"

        await eventually(undone, within=20)
        rss = {rs.metadata.name: rs for rs in await replica_sets(client)}
        assert len(rss) == 2
        reused = rss[first.metadata.name]
        assert reused.spec is not None
        assert reused.spec.replicas == 2
        assert (reused.metadata.annotations or {})[REVISION_ANNOTATION] == "3"
        history = await kubectl(kubeconfig, "rollout", "history", "deployment/web")
        revisions = [line.split()[0] for line in history.splitlines()[2:] if line.strip()]
        assert revisions == ["2", "3"]
