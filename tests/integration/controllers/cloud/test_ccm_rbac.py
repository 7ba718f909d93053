"""deploy/cloud-controller-manager/rbac.yaml gives ``kcm cloud-controller-manager`` what it
needs and no more: the CCM runs as its ServiceAccount (a token user) on an API server that
authorizes by RBAC, initialises a node, deletes a gone one and balances a Service without one
Forbidden; the same identity cannot touch Pods or Secrets."""

from __future__ import annotations

import logging
import signal
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
import yaml

from kcm.apiserver import ApiServer
from kcm.cli._ccm import parse_ccm_args
from kcm.cli._run import serve
from kcm.client import ApiClient, load_kubeconfig_dict
from kcm.cloudprovider import TAINT_NODE_UNINITIALIZED, FakeCloud, _registry
from kcm.errors import Forbidden, NotFound
from kcm.models import from_dict, model_for
from kcm.models.core_v1 import Node, Pod, Secret, Service, Taint
from kcm.testing import eventually
from tests.helpers.fake_signals import FakeSignals

from .cloud_harness import create_node, node
from .lb_services import ingress_ips, lb_service

pytestmark = pytest.mark.anyio

MANIFEST = Path(__file__).resolve().parents[4] / "deploy" / "cloud-controller-manager" / "rbac.yaml"
USER = "system:serviceaccount:kube-system:cloud-controller-manager"
GROUPS = "system:serviceaccounts,system:serviceaccounts:kube-system"


def as_user(server: ApiServer, token: str) -> Any:
    config = load_kubeconfig_dict(server.kubeconfig())
    return msgspec.structs.replace(config, token=token, qps=-1)


async def test_the_manifest_is_enough_for_the_ccm(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(f'ccm-token,{USER},ccm-uid,"{GROUPS}"\n')
    cloud = FakeCloud(name="rbactest")
    cloud.add_instance("n1", instance_type="m1")
    _registry.register_cloud_provider("rbactest", lambda config: cloud)
    try:
        async with ApiServer(token="admin-token", token_auth_file=tokens) as server:
            async with ApiClient(as_user(server, "admin-token")) as admin:
                for doc in yaml.safe_load_all(MANIFEST.read_text()):
                    model = model_for(doc["apiVersion"], doc["kind"])
                    namespace = doc["metadata"].get("namespace")
                    await admin.api(model, namespace).create(from_dict(model, doc))
                await run_ccm(server, admin, tmp_path, caplog)
            async with ApiClient(as_user(server, "ccm-token")) as ccm:
                for model in (Pod, Secret):
                    with pytest.raises(Forbidden):
                        await ccm.api(model, "default").list()
    finally:
        _registry._factories.pop("rbactest", None)


async def run_ccm(
    server: ApiServer, admin: ApiClient, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    kubeconfig = tmp_path / "ccm.kubeconfig"
    config = server.kubeconfig()
    config["users"][0]["user"] = {"token": "ccm-token"}
    kubeconfig.write_text(yaml.safe_dump(config))
    settings = parse_ccm_args(
        [
            f"--kubeconfig={kubeconfig}",
            "--cloud-provider=rbactest",
            "--secure-port=0",
            "--node-monitor-period=100ms",
        ]
    )
    signals = FakeSignals()
    uninitialized = Taint(key=TAINT_NODE_UNINITIALIZED, effect="NoSchedule")
    with caplog.at_level(logging.WARNING):
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: serve(settings, environ={}, receiver=signals, status_view=False))
            await create_node(admin, node("n1", taints=[uninitialized]))
            await create_node(admin, node("gone", ready="False"))
            await admin.api(Service, "default").create(lb_service())

            async def done() -> bool:
                n = await admin.api(Node).get("n1")
                s = await admin.api(Service, "default").get("web")
                try:
                    await admin.api(Node).get("gone")
                except NotFound:
                    gone = True
                else:
                    gone = False
                events = await admin.api(model_for("v1", "Event"), "default").list()
                return bool(
                    n.spec
                    and not n.spec.taints
                    and ingress_ips(s)
                    and gone
                    and any(e.reason == "EnsuredLoadBalancer" for e in events.items)
                )

            await eventually(done)
            async with signals.send:
                await signals.send.send(signal.SIGTERM)
    assert "forbidden" not in caplog.text.lower()
