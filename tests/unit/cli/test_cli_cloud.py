"""``kcm``'s cloud settings: --cloud-provider/--cloud-config/--cluster-name, which provider
they select (local when embedded, none against a cluster), and cloud controllers receiving
it or being skipped without one."""

from __future__ import annotations

import contextlib
import logging
import sys
import types
from typing import Any

import pytest

import kcm.controllers as registry
from kcm.cli._cloud import cloud_provider_name, load_cloud
from kcm.cli._flags import parse_run_args
from kcm.cli._run import _add_controllers
from kcm.cli._settings import RunSettings
from kcm.client import ClientConfig
from kcm.cloudprovider import FakeCloud, LocalCloud
from kcm.controllers import ControllerSpec
from kcm.errors import ConfigError

pytestmark = pytest.mark.anyio


class FakeManager:
    registry = "the registry"
    client = "the shared client"


def test_flags_and_defaults() -> None:
    s = parse_run_args([])
    assert (s.cloud_provider, s.cloud_config, s.cluster_name) == (None, None, "kubernetes")
    s = parse_run_args(["--cloud-provider=local", "--cloud-config=/x.yaml", "--cluster-name=prod"])
    assert (s.cloud_provider, s.cloud_config, s.cluster_name) == ("local", "/x.yaml", "prod")
    assert s.controller_options is not None
    assert s.controller_options["route"] == {
        "configure_cloud_routes": True,
        "allocate_node_cidrs": False,
        "cluster_cidr": "",
        "route_reconciliation_period": 10.0,
    }
    s = parse_run_args(["--allocate-node-cidrs=true", "--cluster-cidr=10.244.0.0/16"])
    assert s.controller_options is not None
    assert s.controller_options["route"]["allocate_node_cidrs"] is True


def test_embedded_mode_defaults_to_the_local_cloud_and_a_cluster_to_none(
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert cloud_provider_name(None, embedded=True) == "local"
    assert cloud_provider_name(None, embedded=False) == "external"
    assert cloud_provider_name("external", embedded=True) == "external"
    assert isinstance(load_cloud("local", None), LocalCloud)
    with caplog.at_level(logging.INFO, logger="kcm.cli"):
        assert load_cloud("external", None) is None
    assert "cloud loops (service, route, cloud-node-lifecycle) are not run here" in caplog.text
    with pytest.raises(ConfigError, match="unknown --cloud-provider 'nope'"):
        load_cloud("nope", None)


async def test_cloud_controllers_get_the_provider_or_are_skipped(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[tuple[Any, str]] = []
    module = types.ModuleType("kcm.controllers.fake_cloudy")

    def add_to_manager(manager: Any, *, workers: int = 1, cloud: Any, cluster_name: str) -> None:
        seen.append((cloud, cluster_name))

    module.add_to_manager = add_to_manager  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "kcm.controllers.fake_cloudy", module)
    specs = {"cloudy": ControllerSpec("cloudy", "fake_cloudy", "h", None, 1, cloud=True)}
    monkeypatch.setattr(registry, "CONTROLLERS", specs)
    settings = RunSettings(controllers=("cloudy",), cluster_name="prod")
    config = ClientConfig(server="http://127.0.0.1:9")
    cloud = FakeCloud()
    async with contextlib.AsyncExitStack() as stack:
        assert await _add_controllers(FakeManager(), settings, config, stack, cloud) == []
        with caplog.at_level(logging.INFO, logger="kcm.cli"):
            skipped = await _add_controllers(FakeManager(), settings, config, stack, None)
    assert seen == [(cloud, "prod")]
    assert skipped == ["cloudy"]
    assert "Skipping controller cloudy: no cloud provider here" in caplog.text


def test_kcm_dispatches_the_cloud_controller_manager(capsys: pytest.CaptureFixture[str]) -> None:
    from kcm.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["cloud-controller-manager", "--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: kcm cloud-controller-manager --cloud-provider=NAME")
    assert "--concurrent-service-syncs" in out
    assert "--concurrent-deployment-syncs" not in out


def test_the_cloud_controller_manager_reads_the_flags_it_shares_with_kcm_alike() -> None:
    from kcm.cli._ccm import CLOUD_CONTROLLERS, parse_ccm_args

    argv = [
        "--kubeconfig=/k",
        "--master=https://m",
        "--kube-api-qps=5",
        "--kube-api-burst=7",
        "--cloud-provider=local",
        "--cloud-config=/c.yaml",
        "--cluster-name=prod",
        "--leader-elect=false",
        "--leader-elect-lease-duration=30s",
        "--leader-elect-resource-name=lock",
        "--leader-elect-resource-namespace=ns",
        "--bind-address=127.0.0.1",
        "--secure-port=0",
        "--v=3",
        "--logging-format=json",
        "--concurrent-service-syncs=3",
        "--route-reconciliation-period=20s",
    ]
    kcm, ccm = parse_run_args(argv), parse_ccm_args(argv)
    shared = [
        "kubeconfig",
        "master",
        "kube_api_qps",
        "kube_api_burst",
        "cloud_provider",
        "cloud_config",
        "cluster_name",
        "leader_elect",
        "leader_election",
        "resource_lock",
        "resource_name",
        "resource_namespace",
        "bind_address",
        "secure_port",
        "serving",
        "verbosity",
        "logging_format",
        "status_view",
    ]
    assert {f: getattr(ccm, f) for f in shared} == {f: getattr(kcm, f) for f in shared}
    assert (ccm.cluster_name, ccm.resource_name, ccm.verbosity) == ("prod", "lock", 3)
    assert ccm.workers == {n: (kcm.workers or {})[n] for n in CLOUD_CONTROLLERS}
    assert ccm.controller_options == {
        n: (kcm.controller_options or {})[n] for n in CLOUD_CONTROLLERS
    }
    assert (ccm.workers or {})["service"] == 3
    assert (ccm.controller_options or {})["route"]["route_reconciliation_period"] == 20.0
    assert ccm.simulate is False


def test_a_repeated_controllers_flag_adds_to_the_earlier_ones() -> None:
    from kcm.cli._ccm import parse_ccm_args

    argv = ["--cloud-provider=local", "--controllers=route", "--controllers= service ,"]
    assert sorted(parse_ccm_args(argv).controllers) == ["route", "service"]
    assert parse_run_args(argv[1:]).controllers == ("route", "service")
