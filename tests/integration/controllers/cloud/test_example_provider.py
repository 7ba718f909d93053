"""The example provider (examples/cloud-provider-example), a package of its own, found through
the entry point its pyproject.toml declares and run by ``kcm cloud-controller-manager
--cloud-provider=example``.

Installing it with pip would change the shared virtualenv, so the test does what pip leaves
behind instead: the package directory on ``sys.path`` and a ``.dist-info`` whose
``entry_points.txt`` is written from the pyproject's ``[project.entry-points]`` table.
"""

from __future__ import annotations

import signal
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from kcm.apiserver import ApiServer
from kcm.cli._ccm import parse_ccm_args
from kcm.cli._run import serve
from kcm.client import ApiClient
from kcm.cloudprovider import ENTRY_POINT_GROUP, TAINT_NODE_UNINITIALIZED, cloud_provider_names
from kcm.errors import ConfigError
from kcm.models.core_v1 import Node, Service, Taint
from kcm.testing import client_config_for, eventually
from tests.helpers.fake_signals import FakeSignals

from .cloud_harness import create_node, node
from .lb_services import ingress_ips, lb_service

pytestmark = pytest.mark.anyio

EXAMPLE = Path(__file__).resolve().parents[4] / "examples" / "cloud-provider-example"


@pytest.fixture
def installed(tmp_path: Path) -> Iterator[None]:
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())["project"]
    dist = tmp_path / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    lines = [f"[{ENTRY_POINT_GROUP}]"]
    lines += [f"{k} = {v}" for k, v in project["entry-points"][ENTRY_POINT_GROUP].items()]
    (dist / "entry_points.txt").write_text("\n".join(lines) + "\n")
    sys.path[:0] = [str(EXAMPLE), str(tmp_path)]
    try:
        yield
    finally:
        sys.path.remove(str(EXAMPLE))
        sys.path.remove(str(tmp_path))
        sys.modules.pop("kcm_provider_example", None)


def test_the_example_declares_the_entry_point(installed: None) -> None:
    assert "example" in cloud_provider_names()
    from kcm.cloudprovider import init_cloud_provider

    with pytest.raises(ConfigError, match="needs --cloud-config"):
        init_cloud_provider("example")


async def test_the_ccm_runs_on_the_installed_example(
    installed: None, api_server: ApiServer, tmp_path: Path
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    api_server.write_kubeconfig(kubeconfig)
    settings = parse_ccm_args(
        [
            f"--kubeconfig={kubeconfig}",
            "--cloud-provider=example",
            f"--cloud-config={EXAMPLE / 'inventory.yaml'}",
            "--secure-port=0",
            "--leader-elect=false",
        ]
    )
    signals = FakeSignals()
    result: list[signal.Signals | None] = []

    async def run() -> None:
        result.append(await serve(settings, environ={}, receiver=signals, status_view=False))

    uninitialized = Taint(key=TAINT_NODE_UNINITIALIZED, effect="NoSchedule")
    async with ApiClient(client_config_for(api_server)) as client, anyio.create_task_group() as tg:
        tg.start_soon(run)
        await create_node(client, node("worker-2", taints=[uninitialized]))
        await client.api(Service, "default").create(lb_service())

        async def initialised() -> bool:
            n = await client.api(Node).get("worker-2")
            return bool(n.spec and not n.spec.taints)

        async def vip() -> str | None:
            s = await client.api(Service, "default").get("web")
            return next(iter(ingress_ips(s)), None)

        await eventually(initialised)
        n = await client.api(Node).get("worker-2")
        assert n.spec is not None
        assert n.spec.provider_id == "example://worker-2"
        labels = n.metadata.labels or {}
        assert labels["node.kubernetes.io/instance-type"] == "c5.large"
        assert labels["topology.kubernetes.io/zone"] == "eu-example-1b"
        await eventually(vip)
        assert await vip() == "203.0.113.10"
        async with signals.send:
            await signals.send.send(signal.SIGTERM)
    assert result == [signal.SIGTERM]
