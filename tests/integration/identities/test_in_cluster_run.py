"""kcm in-cluster style against the embedded API server with RBAC on: ``KUBERNETES_SERVICE_HOST``
/``PORT``, a ServiceAccount token file and CA (kube-system/kcm with deploy/controller-manager's
RBAC), ``--use-service-account-credentials``, leader election on kcm's own lease. Every
default controller works through a Deployment, a Service, a Job, a StatefulSet, a DaemonSet, a
PodDisruptionBudget, a ResourceQuota and a ReplicationController, and no request is refused
by RBAC (the server's audit lines). (A namespace deletion would add the namespace controller,
and nine seconds of its requeue; its ``namespaces/status`` PATCH is one of the supplement's
rules, all checked against kube's roles by tests/unit/packaging/test_deploy_rbac.py.)"""

from __future__ import annotations

import base64
import logging
import re
import signal
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
import yaml

from kcm.apiserver import ApiServer
from kcm.cli._flags import parse_run_args
from kcm.cli._run import serve
from kcm.client import ApiClient, load_kubeconfig_dict
from kcm.models import ConfigMap, Endpoints, Lease, from_dict, model_for
from kcm.testing import eventually
from tests.helpers.fake_signals import FakeSignals

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

DEPLOY = Path(__file__).resolve().parents[3] / "deploy" / "controller-manager"
RBAC = [
    doc
    for name in ("serviceaccount.yaml", "rbac.yaml", "rbac-controllers.yaml")
    for doc in yaml.safe_load_all((DEPLOY / name).read_text())
]
SA = "system:serviceaccount:kube-system:"
_AUDIT = re.compile(r"user=(\S+) verb=(\S+) uri=(\S+) code=(\d+)")

WORKLOADS = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx, ports: [{containerPort: 80}]}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: default}
spec:
  template:
    spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s, namespace: default}
spec:
  replicas: 1
  serviceName: web
  selector: {matchLabels: {app: s}}
  template:
    metadata: {labels: {app: s}}
    spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: d, namespace: default}
spec:
  selector: {matchLabels: {app: d}}
  template:
    metadata: {labels: {app: d}}
    spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: pdb, namespace: default}
spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: q, namespace: default}
spec: {hard: {pods: "50"}}
---
apiVersion: v1
kind: ReplicationController
metadata: {name: rc, namespace: default}
spec:
  replicas: 1
  selector: {app: rc}
  template:
    metadata: {labels: {app: rc}}
    spec: {containers: [{name: c, image: nginx}]}
"""


async def create_all(client: ApiClient, docs: list[dict[str, Any]]) -> None:
    for doc in docs:
        model = model_for(doc["apiVersion"], doc["kind"])
        await client.api(model, doc["metadata"].get("namespace")).create(from_dict(model, doc))


def write_mount(mount: Path, token: str, ca: bytes) -> None:
    """The ServiceAccount volume's three files."""
    mount.mkdir()
    (mount / "token").write_text(token)
    (mount / "ca.crt").write_bytes(ca)
    (mount / "namespace").write_text("kube-system")


async def mount_service_account(server: ApiServer, admin: ApiClient, mount: Path) -> None:
    """What the kubelet mounts for a pod of ServiceAccount kube-system/kcm."""
    response = await admin.request(
        "POST",
        "/api/v1/namespaces/kube-system/serviceaccounts/kcm/token",
        json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
    )
    cluster = server.kubeconfig()["clusters"][0]["cluster"]
    write_mount(
        mount,
        msgspec.json.decode(response.content)["status"]["token"],
        base64.b64decode(cluster["certificate-authority-data"]),
    )


def status_of(obj: Any) -> Any:
    return msgspec.to_builtins(obj.status) if obj.status is not None else {}


async def test_kcm_in_cluster_with_rbac_gets_no_403(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="kcm.apiserver.audit")
    async with ApiServer(token="admin-token", tls=True) as server:
        admin_config = msgspec.structs.replace(load_kubeconfig_dict(server.kubeconfig()), qps=-1)
        async with ApiClient(admin_config) as admin:
            await create_all(admin, RBAC)
            await mount_service_account(server, admin, tmp_path / "sa")
            environ = {
                "KUBERNETES_SERVICE_HOST": "127.0.0.1",
                "KUBERNETES_SERVICE_PORT": str(server.port),
                "KCM_SERVICE_ACCOUNT_DIR": str(tmp_path / "sa"),
            }
            settings = parse_run_args(
                ["--use-service-account-credentials", "--secure-port=0", "--controllers=*"]
            )
            assert settings.embedded(environ) is False
            signals = FakeSignals()
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: serve(settings, environ=environ, receiver=signals))
                await create_all(admin, list(yaml.safe_load_all(WORKLOADS)))

                async def settled() -> bool:
                    def get(kind: str, name: str, ns: str | None = "default") -> Any:
                        api, _, k = kind.rpartition("/")
                        return admin.api(model_for(api, k), ns).get(name)

                    sts = await get("apps/v1/StatefulSet", "s")
                    job = await get("batch/v1/Job", "j")
                    rc = await get("v1/ReplicationController", "rc")
                    quota = await get("v1/ResourceQuota", "q")
                    pdb = await get("policy/v1/PodDisruptionBudget", "pdb")
                    deploy = await get("apps/v1/Deployment", "web")
                    endpoints = await admin.api(Endpoints, "default").list()
                    roots = await admin.api(ConfigMap, "default").list()
                    return (
                        status_of(deploy).get("replicas") == 2
                        and status_of(sts).get("replicas") == 1
                        and status_of(job).get("active") == 1
                        and status_of(rc).get("replicas") == 1
                        and "pods" in (status_of(quota).get("used") or {})
                        and status_of(pdb).get("observedGeneration") == 1
                        and any(e.metadata.name == "web" for e in endpoints.items)
                        and any(c.metadata.name == "kube-root-ca.crt" for c in roots.items)
                    )

                await eventually(settled, within=30)
                lease = await admin.api(Lease, "kube-system").get("kcm")
                assert lease.spec is not None
                assert lease.spec.holder_identity
                async with signals.send:
                    await signals.send.send(signal.SIGTERM)
    seen = [
        m.groups()
        for m in (_AUDIT.search(r.getMessage()) for r in caplog.records)
        if m and m.group(1).startswith(SA)
    ]
    users = {user for user, *_ in seen}
    assert SA + "kcm" in users  # kcm's own identity: informers, lease, token requests
    for account in (
        "deployment-controller",
        "replicaset-controller",
        "job-controller",
        "statefulset-controller",
        "endpoint-controller",
        "resourcequota-controller",
        "disruption-controller",
        "root-ca-cert-publisher",
    ):
        assert SA + account in users, account
    refused = [line for line in seen if line[3] == "403"]
    assert not refused, refused
