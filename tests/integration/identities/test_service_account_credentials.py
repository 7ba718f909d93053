"""``--use-service-account-credentials`` on an API server that authorizes by RBAC: each
controller talks as ``kube-system/<client name>`` (created, with a TokenRequest token), which
the bootstrap policy's ``system:controller:*`` roles allow once deploy/'s ``patch`` supplement
is in (kcm writes with PATCH where kube PUTs); a Deployment rolls out, and the server's audit
lines show who did what, with no 403. Without the supplement the same run is refused."""

from __future__ import annotations

import io
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
from kcm.models import (
    Container,
    Deployment,
    DeploymentSpec,
    LabelSelector,
    ObjectMeta,
    Pod,
    PodSpec,
    PodTemplateSpec,
    ReplicaSet,
    ServiceAccount,
    from_dict,
    model_for,
)
from kcm.testing import eventually
from tests.helpers.fake_signals import FakeSignals

pytestmark = pytest.mark.anyio

SA = "system:serviceaccount:kube-system:"
DEPLOY = Path(__file__).resolve().parents[3] / "deploy" / "controller-manager"
RBAC_DOCS = list(yaml.safe_load_all((DEPLOY / "rbac-controllers.yaml").read_text()))
_AUDIT = re.compile(r"user=(\S+) verb=(\S+) uri=(\S+) code=(\d+)")


def deployment() -> Deployment:
    labels = {"app": "web"}
    return Deployment(
        metadata=ObjectMeta(name="web", namespace="default"),
        spec=DeploymentSpec(
            replicas=2,
            selector=LabelSelector(match_labels=labels),
            template=PodTemplateSpec(
                metadata=ObjectMeta(labels=labels),
                spec=PodSpec(containers=[Container(name="c", image="nginx")]),
            ),
        ),
    )


async def apply(client: ApiClient, docs: list[dict[str, Any]]) -> None:
    for doc in docs:
        model = model_for(doc["apiVersion"], doc["kind"])
        await client.api(model, doc["metadata"].get("namespace")).create(from_dict(model, doc))


async def run_deployment(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, *, supplement: bool
) -> tuple[set[str], list[tuple[str, ...]]]:
    """Roll out a Deployment with deployment, replicaset and serviceaccount as their SAs;
    the ServiceAccounts in kube-system and the audit lines (user, verb, uri, code)."""
    caplog.set_level(logging.DEBUG, logger="kcm.apiserver.audit")
    async with ApiServer(token="admin-token") as server:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(yaml.safe_dump(server.kubeconfig()))
        settings = parse_run_args(
            [
                f"--kubeconfig={kubeconfig}",
                "--use-service-account-credentials",
                "--controllers=deployment,replicaset,serviceaccount",
                "--leader-elect=false",
                "--secure-port=0",
            ]
        )
        signals = FakeSignals()
        unthrottled = msgspec.structs.replace(load_kubeconfig_dict(server.kubeconfig()), qps=-1)
        async with ApiClient(unthrottled) as admin:
            if supplement:
                await apply(admin, RBAC_DOCS)
            async with anyio.create_task_group() as tg:
                tg.start_soon(
                    lambda: serve(settings, environ={}, receiver=signals, status_view=False)
                )
                await admin.api(Deployment, "default").create(deployment())

                async def rolled_out() -> bool:
                    pods = await admin.api(Pod, "default").list()
                    rs = await admin.api(ReplicaSet, "default").list()
                    status = rs.items[0].status if rs.items else None
                    return len(pods.items) == 2 and bool(status and status.replicas == 2)

                if supplement:
                    await eventually(rolled_out, within=20)
                else:  # refused: wait for the first 403 of the ReplicaSet's status write
                    await eventually(lambda: "cannot patch resource" in caplog.text, within=20)
                async with signals.send:
                    await signals.send.send(signal.SIGTERM)
            accounts = {
                sa.metadata.name
                for sa in (await admin.api(ServiceAccount, "kube-system").list()).items
            }
    lines = [
        _AUDIT.search(r.getMessage()) for r in caplog.records if r.name == "kcm.apiserver.audit"
    ]
    return accounts, [m.groups() for m in lines if m]


async def test_controllers_act_as_their_service_accounts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    accounts, seen = await run_deployment(tmp_path, caplog, supplement=True)
    assert {"deployment-controller", "replicaset-controller", "service-account-controller"} <= (
        accounts
    )
    writers = {
        (user, verb, uri.split("?")[0])
        for user, verb, uri, code in seen
        if verb in ("POST", "PATCH") and code.startswith("2")
    }
    rs = "/apis/apps/v1/namespaces/default/replicasets"
    assert (SA + "deployment-controller", "POST", rs) in writers
    assert (SA + "replicaset-controller", "POST", "/api/v1/namespaces/default/pods") in writers
    assert any(w[0] == SA + "replicaset-controller" and w[2].endswith("/status") for w in writers)
    assert not [line for line in seen if line[3] == "403"], "a request was forbidden"
    # tokens come from TokenRequests kcm's own identity makes; nothing else acts as the SAs
    assert {u for u, *_ in seen if u.startswith(SA)} <= {
        SA + "deployment-controller",
        SA + "replicaset-controller",
        SA + "service-account-controller",
    }


async def test_kubes_roles_alone_refuse_kcms_patches(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Why deploy/ ships the supplement: kube's roles grant ``update`` on ``*/status``."""
    _accounts, seen = await run_deployment(tmp_path, caplog, supplement=False)
    refused = {(u, v) for u, v, uri, code in seen if code == "403" and uri.endswith("/status")}
    assert (SA + "replicaset-controller", "PATCH") in refused or (
        SA + "deployment-controller",
        "PATCH",
    ) in refused


async def test_embedded_mode_says_the_flag_has_no_effect(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = parse_run_args(
        [
            f"--data-dir={tmp_path / 'data'}",
            "--use-service-account-credentials",
            "--controllers=podgc",
            "--secure-port=0",
            "--no-simulation",
            "--leader-elect=false",
        ]
    )
    signals = FakeSignals()
    caplog.set_level(logging.WARNING, logger="kcm.cli")
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: serve(settings, environ={}, out=io.StringIO(), receiver=signals))
        await eventually(lambda: "no effect in embedded mode" in caplog.text, within=20)
        async with signals.send:
            await signals.send.send(signal.SIGTERM)
