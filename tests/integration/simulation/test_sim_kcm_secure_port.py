"""``kcm run``'s secure port: a busy port in embedded mode (a free one instead) and against a
cluster (kube-controller-manager's listener error), per-controller checks named as the Go
manager's (golden recorded from it), delegated authn/authz through the API server."""

from __future__ import annotations

import io
import logging
import re
import signal
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx
import pytest

from kcm.apiserver import ApiServer
from kcm.cli._run import serve
from kcm.controllers import CONTROLLERS
from kcm.testing import eventually

from .test_sim_kcm_serve import FakeSignals, free_port

pytestmark = pytest.mark.anyio

GOLDEN = Path(__file__).parents[2] / "golden" / "kube-controller-manager"

SKIPPED_IN_RECORDING = {
    # kube-controller-manager controllers the recording did not start: csrsigning without
    # signing files, nodeipam without --allocate-node-cidrs, the cloud ones without a
    # provider, and the two that are off by default; cloud-node is the cloud controller
    # manager's (with the same name there), which embedded kcm runs on its local provider.
    "cloud-node",
    "csrsigning",
    "nodeipam",
    "service",
    "route",
    "cloud-node-lifecycle",
    "bootstrapsigner",
    "tokencleaner",
}


@contextmanager
def bound_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        yield int(sock.getsockname()[1])


async def healthz_answers(http: httpx.AsyncClient) -> None:
    """Wait until kcm's secure port (``http``'s base URL) answers ``/healthz`` with 200."""

    async def served() -> bool:
        try:
            return (await http.get("/healthz")).status_code == 200
        except httpx.TransportError:
            return False

    await eventually(served, within=30)


async def run_until(settings: list[str], body: object, *, environ: dict[str, str]) -> None:
    from kcm.cli._flags import parse_run_args

    signals = FakeSignals()
    async with anyio.create_task_group() as tg:
        tg.start_soon(
            lambda: serve(
                parse_run_args(settings), environ=environ, out=io.StringIO(), receiver=signals
            )
        )
        await body()  # type: ignore[operator]
        async with signals.send:
            await signals.send.send(signal.SIGTERM)


async def test_embedded_kcm_takes_a_free_port_when_the_secure_port_is_busy(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    with bound_port() as busy:

        async def serving_elsewhere() -> None:
            async def moved() -> bool:
                return "instead" in caplog.text

            await eventually(moved, within=30)
            line = next(r.getMessage() for r in caplog.records if "instead" in r.getMessage())
            assert f"port {busy} is in use" in line
            port = int(re.findall(r"on port (\d+) instead", line)[0])
            async with httpx.AsyncClient(verify=False) as http:
                assert (await http.get(f"https://127.0.0.1:{port}/healthz")).text == "ok"

        await run_until(
            [
                f"--data-dir={tmp_path}",
                "--controllers=",
                "--no-simulation",
                f"--secure-port={busy}",
            ],
            serving_elsewhere,
            environ={},
        )


async def test_against_a_cluster_a_busy_port_fails_as_kube_controller_manager() -> None:
    from kcm.cli._flags import parse_run_args

    async with ApiServer() as server:
        with bound_port() as busy:
            settings = parse_run_args(
                [
                    f"--master={server.url}",
                    "--controllers=",
                    "--bind-address=127.0.0.1",
                    f"--secure-port={busy}",
                ]
            )
            with pytest.raises(OSError) as failed:
                await serve(settings, environ={}, out=io.StringIO())
    where = f"127.0.0.1:{busy}"
    assert str(failed.value) == (
        f"failed to create listener: failed to listen on {where}: listen tcp {where}: "
        "bind: address already in use"
    )


def golden_checks() -> set[str]:
    text = (GOLDEN / "healthz-verbose.txt").read_text()
    return set(re.findall(r"^\[\+\](\S+) ok$", text, re.MULTILINE))


async def test_healthz_names_one_check_per_started_controller_as_the_go_manager(
    tmp_path: Path,
) -> None:
    """Every check kcm registers is named as kube-controller-manager's (golden recorded from
    the Go manager), and every Go check kcm has a controller for is there."""
    port = free_port()
    names: list[str] = []
    metrics: list[str] = []

    async def read_checks() -> None:
        async with httpx.AsyncClient(verify=False) as http:

            async def served() -> bool:
                try:
                    response = await http.get(f"https://127.0.0.1:{port}/healthz?verbose")
                except httpx.TransportError:
                    return False
                return response.status_code == 200 and "[+]podgc ok" in response.text

            await eventually(served, within=60)
            text = (await http.get(f"https://127.0.0.1:{port}/healthz?verbose")).text
            metrics.append((await http.get(f"https://127.0.0.1:{port}/metrics")).text)
        names.extend(re.findall(r"^\[\+\](\S+) ok$", text, re.MULTILINE))

    await run_until(
        [
            f"--data-dir={tmp_path}",
            "--no-simulation",
            "--leader-elect=false",
            f"--secure-port={port}",
            "--controllers=*,-csrsigning,-nodeipam",
        ],
        read_checks,
        environ={},
    )
    go = golden_checks()
    assert set(names) <= go | SKIPPED_IN_RECORDING, set(names) - go
    assert "serviceaccount-token" not in names  # Go starts it first, without a check
    kcm_has = {n for n in go if n in CONTROLLERS}
    assert kcm_has - {"csrsigning", "nodeipam"} <= set(names)
    check_metrics(metrics[0])


KCM_ONLY_QUEUES = {
    "csrapproving": "Go names csrapproving's and csrsigning's queues both 'certificate'; a kcm "
    "controller's name is unique per registry",
    "cloud-node": "the cloud controller manager's controller (no named queue in Go)",
    "sim-kubelet": "the simulation (embedded mode)",
    "sim-scheduler": "the simulation (embedded mode)",
}
"""kcm's work queues without a kube-controller-manager counterpart of the same name."""


def check_metrics(text: str) -> None:
    """Queue names as the Go manager's (golden recorded from its /metrics), client-go's
    request metrics, the process collector, and no ``*_created`` series."""
    go_queues = {
        line
        for line in (GOLDEN / "workqueue-names.txt").read_text().splitlines()
        if line and not line.startswith("#")
    }
    queues = set(re.findall(r'^workqueue_adds_total\{name="([^"]+)"', text, re.MULTILINE))
    assert queues - go_queues == set(KCM_ONLY_QUEUES) & queues, queues - go_queues
    families = set(re.findall(r"^# TYPE (\S+) ", text, re.MULTILINE))
    for family in (
        "rest_client_requests_total",
        "rest_client_request_duration_seconds",
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
        "process_start_time_seconds",
    ):
        assert family in families, family
    assert re.search(
        r'^rest_client_requests_total\{code="200",host="127.0.0.1:\d+",method="GET"\}',
        text,
        re.MULTILINE,
    )
    assert "_created" not in text


async def test_metrics_is_authorized_by_the_api_server_with_delegation_kubeconfigs(
    tmp_path: Path,
) -> None:
    """With --authentication-kubeconfig/--authorization-kubeconfig, anonymous /healthz passes
    (always-allow path), /metrics needs RBAC's nonResourceURLs grant, a bad token is 401."""
    from kcm.client import ApiClient
    from kcm.models import ClusterRole, ClusterRoleBinding, ObjectMeta, PolicyRule, RoleRef, Subject
    from kcm.testing import client_config_for

    port = free_port()
    async with ApiServer() as server, ApiClient(client_config_for(server)) as admin:
        kubeconfig = tmp_path / "kubeconfig"
        server.write_kubeconfig(kubeconfig)
        await admin.api(ClusterRole).create(
            ClusterRole(
                metadata=ObjectMeta(name="scrape"),
                rules=[PolicyRule(non_resource_urls=["/metrics"], verbs=["get"])],
            )
        )
        await admin.api(ClusterRoleBinding).create(
            ClusterRoleBinding(
                metadata=ObjectMeta(name="scrape"),
                role_ref=RoleRef(
                    api_group="rbac.authorization.k8s.io", kind="ClusterRole", name="scrape"
                ),
                subjects=[
                    Subject(
                        kind="User", name="system:anonymous", api_group="rbac.authorization.k8s.io"
                    )
                ],
            )
        )

        async def check() -> None:
            async with httpx.AsyncClient(
                base_url=f"https://127.0.0.1:{port}", verify=False
            ) as http:
                await healthz_answers(http)
                assert (await http.get("/metrics")).status_code == 200
                denied = await http.get("/debug/pprof")
                assert denied.status_code == 403
                assert 'User \\"system:anonymous\\" cannot get path' in denied.text
                bad = await http.get("/healthz", headers={"Authorization": "Bearer nope"})
                assert bad.status_code == 401

        await run_until(
            [
                f"--kubeconfig={kubeconfig}",
                f"--authentication-kubeconfig={kubeconfig}",
                f"--authorization-kubeconfig={kubeconfig}",
                "--controllers=",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={port}",
            ],
            check,
            environ={},
        )


async def test_against_a_cluster_metrics_is_for_system_masters_client_certificates(
    tmp_path: Path,
) -> None:
    """kube-controller-manager's answers without delegation kubeconfigs: /healthz is open,
    /metrics is 403 to anonymous and to a token nobody reviews, 200 to a ``system:masters``
    certificate the --client-ca-file CA issued (embedded mode stays open: see
    test_healthz_names_one_check_per_started_controller_as_the_go_manager)."""
    import ssl

    from tests.helpers.client_certificates import ClientCA

    ca = ClientCA.create("client-ca")
    ca_file = ca.write(tmp_path, "client-ca")
    cert, key = ca.client("alice", "system:masters").write(tmp_path, "alice")
    with_cert = ssl.create_default_context()
    with_cert.check_hostname = False
    with_cert.verify_mode = ssl.CERT_NONE
    with_cert.load_cert_chain(cert, key)
    port = free_port()
    async with ApiServer() as server:

        async def check() -> None:
            url = f"https://127.0.0.1:{port}"
            async with httpx.AsyncClient(base_url=url, verify=False) as http:
                await healthz_answers(http)
                anonymous = await http.get("/metrics")
                assert anonymous.status_code == 403
                assert 'User \\"system:anonymous\\" cannot get path' in anonymous.text
                token = await http.get("/metrics", headers={"Authorization": "Bearer x"})
                assert token.status_code == 403
            async with httpx.AsyncClient(base_url=url, verify=with_cert) as http:
                assert (await http.get("/metrics")).status_code == 200

        await run_until(
            [
                f"--master={server.url}",
                "--controllers=",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={port}",
                f"--client-ca-file={ca_file}",
            ],
            check,
            environ={},
        )
