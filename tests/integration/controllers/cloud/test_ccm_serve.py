"""``kcm cloud-controller-manager`` in-process against the embedded API server: a provider
registered in code, leader election on kube-system/cloud-controller-manager, a tainted node
initialised and a LoadBalancer Service given its address; a clean stop on SIGTERM."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from kcm.apiserver import ApiServer
from kcm.cli._ccm import parse_ccm_args
from kcm.cli._run import serve
from kcm.cloudprovider import TAINT_NODE_UNINITIALIZED, FakeCloud, _registry
from kcm.models import Lease
from kcm.models.core_v1 import Node, Service, Taint
from kcm.testing import eventually
from tests.helpers.fake_signals import FakeSignals

from .cloud_harness import create_node, node
from .lb_services import ingress_ips, lb_service

pytestmark = pytest.mark.anyio


@pytest.fixture
def ccm_test_cloud() -> Iterator[FakeCloud]:
    cloud = FakeCloud(name="ccmtest")
    _registry.register_cloud_provider("ccmtest", lambda config: cloud)
    yield cloud
    _registry._factories.pop("ccmtest", None)


async def test_the_ccm_runs_the_cloud_controllers_on_the_named_provider(
    api_server: ApiServer, tmp_path: Path, ccm_test_cloud: FakeCloud
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    api_server.write_kubeconfig(kubeconfig)
    ccm_test_cloud.add_instance("n1", instance_type="m1", zone="z1", region="r1")
    settings = parse_ccm_args(
        [f"--kubeconfig={kubeconfig}", "--cloud-provider=ccmtest", "--secure-port=0"]
    )
    assert settings.controllers == ("cloud-node", "cloud-node-lifecycle", "route", "service")
    signals = FakeSignals()
    result: list[signal.Signals | None] = []

    async def run() -> None:
        result.append(await serve(settings, environ={}, receiver=signals, status_view=False))

    from kcm.client import ApiClient
    from kcm.testing import client_config_for

    async with ApiClient(client_config_for(api_server)) as client, anyio.create_task_group() as tg:
        tg.start_soon(run)
        await create_node(
            client, node("n1", taints=[Taint(key=TAINT_NODE_UNINITIALIZED, effect="NoSchedule")])
        )
        await client.api(Service, "default").create(lb_service())

        async def initialised() -> bool:
            n = await client.api(Node).get("n1")
            return bool(n.spec and n.spec.provider_id == "ccmtest://n1" and not n.spec.taints)

        async def balanced() -> bool:
            s = await client.api(Service, "default").get("web")
            return ingress_ips(s)[:1] == ["1.2.3.4"]

        await eventually(initialised)
        await eventually(balanced)
        lease = await client.api(Lease, "kube-system").get("cloud-controller-manager")
        assert lease.spec is not None
        assert lease.spec.holder_identity
        async with signals.send:
            await signals.send.send(signal.SIGTERM)
    assert result == [signal.SIGTERM]


def test_the_ccm_needs_a_provider_and_a_cluster(capsys: pytest.CaptureFixture[str]) -> None:
    from kcm.cli._ccm import run_ccm

    with pytest.raises(SystemExit) as exited:
        parse_ccm_args([])
    assert exited.value.code == 2
    assert "--cloud-provider is required" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse_ccm_args(["--cloud-provider=local", "--controllers=deployment"])
    assert "unknown controller 'deployment'" in capsys.readouterr().err
    assert run_ccm(["--cloud-provider=local"], environ={}) == 2
    assert "no cluster" in capsys.readouterr().err
    s = parse_ccm_args(["--cloud-provider=local", "--controllers=*,-route"])
    assert s.controllers == ("cloud-node", "cloud-node-lifecycle", "service")
    assert (s.resource_name, s.secure_port) == ("cloud-controller-manager", 10258)
