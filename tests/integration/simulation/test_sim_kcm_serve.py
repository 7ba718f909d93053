"""``kcm run`` in-process, embedded mode: banner, kubeconfig, simulated nodes, health
endpoint, and a clean stop on SIGTERM that releases the lease."""

from __future__ import annotations

import io
import signal
import socket
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import anyio
import httpx
import pytest
import yaml

from kcm.apiserver import ApiServer
from kcm.cli._flags import parse_run_args
from kcm.cli._run import DataDirLocked, _lock_data_dir, serve
from kcm.client import ApiClient, load_kubeconfig
from kcm.models import Container, Lease, LeaseSpec, Node, ObjectMeta, Pod, PodSpec
from kcm.testing import client_config_for, eventually
from tests.helpers.fake_signals import FakeSignals

pytestmark = pytest.mark.anyio


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def non_loopback_ip() -> str | None:
    """This host's address on its default route (no packet is sent), if it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))
        except OSError:
            return None
        ip = str(s.getsockname()[0])
    return None if ip.startswith("127.") or ip == "0.0.0.0" else ip


async def test_embedded_kcm_serves_simulates_and_stops_cleanly(tmp_path: Path) -> None:
    port = free_port()
    data = tmp_path / "data"
    settings = parse_run_args(
        [
            f"--data-dir={data}",
            "--controllers=podgc",
            f"--secure-port={port}",  # no --bind-address: loopback, as embedded
            "--simulate-nodes=2",
            "--simulate-pod-start-delay=0",
            "--simulate-pod-ready-delay=0",
        ]
    )
    out = io.StringIO()
    signals = FakeSignals()
    result: list[signal.Signals | None] = []

    async def run() -> None:
        result.append(
            await serve(settings, environ={}, out=out, receiver=signals, status_view=False)
        )

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        kubeconfig = data / "kubeconfig"

        async def written() -> bool:
            return kubeconfig.exists()

        await eventually(written)
        assert f"export KUBECONFIG={kubeconfig}" in out.getvalue()
        assert kubeconfig.stat().st_mode & 0o777 == 0o600
        user = yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]
        assert set(user) == {"client-certificate-data", "client-key-data"}
        server = yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
        assert server.startswith("https://127.0.0.1:")  # secure by default
        async with ApiClient(load_kubeconfig(kubeconfig)) as client:

            async def nodes_ready() -> bool:
                return len((await client.api(Node).list()).items) == 2

            await eventually(nodes_ready, within=30)
            pods = client.api(Pod, namespace="default")
            await pods.create(
                Pod(
                    metadata=ObjectMeta(name="hello"),
                    spec=PodSpec(containers=[Container(name="c", image="busybox")]),
                )
            )

            async def running() -> bool:
                p = await pods.get("hello")
                return p.status is not None and p.status.phase == "Running"

            await eventually(running, within=30)
            async with httpx.AsyncClient(
                base_url=f"https://127.0.0.1:{port}", verify=False
            ) as http:  # HTTPS on a self-signed certificate, as kube-controller-manager's
                assert (await http.get("/healthz")).status_code == 200
                verbose = (await http.get("/healthz?verbose")).text
                assert verbose.splitlines() == [
                    "[+]leaderElection ok",
                    "[+]podgc ok",
                    "healthz check passed",
                ]
                assert (await http.get("/healthz/podgc")).text == "ok"
                assert (await http.get("/livez")).status_code == 200
                assert (await http.get("/readyz")).status_code == 200
                metrics = (await http.get("/metrics")).text
            assert 'controller_runtime_reconcile_total{controller="sim-kubelet"' in metrics
            outside = non_loopback_ip()
            if outside is not None:  # embedded mode: the health port is not on the network
                async with httpx.AsyncClient(verify=False) as http:
                    with pytest.raises(httpx.ConnectError):
                        await http.get(f"https://{outside}:{port}/healthz")
            assert "leader_election_master_status" in metrics
            lease = await client.api(Lease, namespace="kube-system").get("kcm")
            assert lease.spec is not None
            assert lease.spec.holder_identity
        with (
            pytest.raises(DataDirLocked, match="is in use by process") as locked,
            _lock_data_dir(data),
        ):
            pass
        assert "--data-dir" in str(locked.value)
        assert "--secure-port" in str(locked.value)
        async with signals.send:
            await signals.send.send(signal.SIGTERM)
    assert result == [signal.SIGTERM]
    # The lease was released on the way out and the state survived in the data dir.
    async with (
        ApiServer(data_dir=data) as restarted,
        ApiClient(client_config_for(restarted)) as client,
    ):
        lease = await client.api(Lease, namespace="kube-system").get("kcm")
        assert lease.spec is not None
        assert lease.spec.holder_identity == ""
        assert (await client.api(Pod, namespace="default").get("hello")).status is not None


async def test_a_lease_left_by_a_crashed_kcm_is_released_at_start(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with (
        ApiServer(data_dir=data) as before,
        ApiClient(client_config_for(before)) as client,
    ):
        await client.api(Lease, namespace="kube-system").create(
            Lease(
                metadata=ObjectMeta(name="kcm"),
                spec=LeaseSpec(
                    holder_identity="crashed_1234",
                    lease_duration_seconds=15,
                    renew_time=datetime.now(UTC),
                ),
            )
        )
    settings = parse_run_args(
        [f"--data-dir={data}", "--controllers=", "--secure-port=0", "--no-simulation"]
    )
    signals = FakeSignals()
    async with anyio.create_task_group() as tg:
        tg.start_soon(partial(serve, settings, environ={}, out=io.StringIO(), receiver=signals))
        kubeconfig = data / "kubeconfig"

        async def written() -> bool:
            return kubeconfig.exists()

        await eventually(written)
        async with ApiClient(load_kubeconfig(kubeconfig)) as client:
            leases = client.api(Lease, namespace="kube-system")

            async def taken_over() -> bool:
                spec = (await leases.get("kcm")).spec
                return spec is not None and spec.holder_identity not in ("", "crashed_1234")

            # Well within the crashed holder's 15 s lease: it was released at start.
            await eventually(taken_over, within=5)
        async with signals.send:
            await signals.send.send(signal.SIGHUP)
