"""Credentials: bearer, token file rotation, basic, exec plugins (v1/v1beta1), 401 refresh."""

from __future__ import annotations

import base64
import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from kcm.client import ApiClient, ClientConfig, ExecConfig
from kcm.errors import ConfigError, Unauthorized
from kcm.models import Pod
from kcm.testing import FakeClock

pytestmark = pytest.mark.anyio

MakeClient = Callable[..., ApiClient]
POD = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"}}
UNAUTHORIZED = httpx.Response(
    401, json={"kind": "Status", "code": 401, "reason": "Unauthorized", "message": "nope"}
)


def auth_headers(server: Any) -> list[str | None]:
    return [r.headers.get("authorization") for r in server.requests]


async def test_bearer_token(make_client: MakeClient, server: Any) -> None:
    server.default = httpx.Response(200, json=POD)
    async with make_client(token="abc") as client:
        await client.api(Pod, "ns").get("p")
    assert auth_headers(server) == ["Bearer abc"]


async def test_basic_auth(make_client: MakeClient, server: Any) -> None:
    server.default = httpx.Response(200, json=POD)
    async with make_client(username="admin", password="s3cret") as client:
        await client.api(Pod, "ns").get("p")
    assert auth_headers(server) == ["Basic " + base64.b64encode(b"admin:s3cret").decode()]


async def test_no_credentials_no_header(make_client: MakeClient, server: Any) -> None:
    server.default = httpx.Response(200, json=POD)
    async with make_client() as client:
        await client.api(Pod, "ns").get("p")
    assert auth_headers(server) == [None]


async def test_static_token_401_is_not_retried(make_client: MakeClient, server: Any) -> None:
    server.default = UNAUTHORIZED
    async with make_client(token="abc") as client:
        with pytest.raises(Unauthorized):
            await client.api(Pod, "ns").get("p")
    assert len(server.requests) == 1


async def test_token_file_rotation(make_client: MakeClient, server: Any, tmp_path: Path) -> None:
    clock = FakeClock()
    token = tmp_path / "token"
    token.write_text("one\n")
    server.default = httpx.Response(200, json=POD)
    async with make_client(token_file=str(token), clock=clock) as client:
        api = client.api(Pod, "ns")
        await api.get("p")
        token.write_text("two\n")
        os.utime(token, ns=(1, 1))  # a different mtime, whatever the filesystem's resolution
        await api.get("p")  # within the re-check interval: cached
        await clock.advance(1.5)
        await api.get("p")
    assert auth_headers(server) == ["Bearer one", "Bearer one", "Bearer two"]


async def test_token_file_401_rereads_and_retries_once(
    make_client: MakeClient, server: Any, tmp_path: Path
) -> None:
    token = tmp_path / "token"
    token.write_text("old")
    server.responses.append(lambda r: (token.write_text("new"), UNAUTHORIZED)[1])
    server.add(200, POD)
    async with make_client(token_file=str(token)) as client:
        pod = await client.api(Pod, "ns").get("p")
    assert pod.metadata.name == "p"
    assert auth_headers(server) == ["Bearer old", "Bearer new"]


async def test_missing_token_file(make_client: MakeClient, tmp_path: Path) -> None:
    async with make_client(token_file=str(tmp_path / "gone")) as client:
        with pytest.raises(ConfigError, match="token file") as info:
            await client.api(Pod, "ns").get("p")
    assert info.value.path == str(tmp_path / "gone")


PLUGIN = r"""
import json, os, sys
counter = sys.argv[1]
n = int(open(counter).read()) + 1 if os.path.exists(counter) else 1
open(counter, "w").write(str(n))
info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
open(counter + ".info", "w").write(json.dumps(info))
if os.environ.get("FAIL"):
    sys.stderr.write("login required: run `tool login`\n")
    sys.exit(3)
status = {"token": f"tok-{n}"}
if len(sys.argv) > 2:
    status["expirationTimestamp"] = sys.argv[2]
print(json.dumps({"apiVersion": info["apiVersion"], "kind": "ExecCredential",
                  "status": status, "echo": info}))
"""


@pytest.fixture
def plugin(tmp_path: Path) -> Callable[..., ExecConfig]:
    script = tmp_path / "plugin.py"
    script.write_text(PLUGIN)

    def make(
        *args: str, api_version: str = "client.authentication.k8s.io/v1", **env: str
    ) -> ExecConfig:
        return ExecConfig(
            command=sys.executable,
            args=(str(script), str(tmp_path / "count"), *args),
            env=tuple(env.items()),
            api_version=api_version,
            install_hint="pip install tool",
        )

    return make


@pytest.mark.parametrize(
    "api_version", ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"]
)
async def test_exec_plugin_cached_until_expiry(
    make_client: MakeClient, server: Any, plugin: Callable[..., ExecConfig], api_version: str
) -> None:
    clock = FakeClock()  # wall time 2026-01-01T00:00:00Z
    server.default = httpx.Response(200, json=POD)
    exec_config = plugin("2026-01-01T00:10:00Z", api_version=api_version)
    async with make_client(exec=exec_config, clock=clock) as client:
        api = client.api(Pod, "ns")
        await api.get("p")
        await api.get("p")
        await clock.advance(601)
        await api.get("p")
    assert auth_headers(server) == ["Bearer tok-1", "Bearer tok-1", "Bearer tok-2"]


async def test_exec_plugin_rerun_on_401(
    make_client: MakeClient, server: Any, plugin: Callable[..., ExecConfig]
) -> None:
    server.responses.append(UNAUTHORIZED)
    server.add(200, POD)
    async with make_client(exec=plugin()) as client:
        await client.api(Pod, "ns").get("p")
    assert auth_headers(server) == ["Bearer tok-1", "Bearer tok-2"]


async def test_failing_plugin_raises_config_error_with_stderr(
    make_client: MakeClient, plugin: Callable[..., ExecConfig]
) -> None:
    async with make_client(exec=plugin(FAIL="1")) as client:
        with pytest.raises(ConfigError, match=r"exit code 3: login required"):
            await client.api(Pod, "ns").get("p")


async def test_missing_plugin_shows_install_hint(make_client: MakeClient, tmp_path: Path) -> None:
    missing = ExecConfig(command=str(tmp_path / "no-such-plugin"), install_hint="brew install x")
    async with make_client(exec=missing) as client:
        with pytest.raises(ConfigError, match="brew install x"):
            await client.api(Pod, "ns").get("p")


async def test_plugin_gets_cluster_info(tmp_path: Path) -> None:
    from kcm.client._auth import run_exec_plugin

    script = tmp_path / "p.py"
    script.write_text(PLUGIN)
    cfg = ExecConfig(
        command=sys.executable,
        args=(str(script), str(tmp_path / "c")),
        provide_cluster_info=True,
    )
    cred = await run_exec_plugin(cfg, server="https://s", ca_data=b"CA")
    assert cred.token == "tok-1"
    info = json.loads((tmp_path / "c.info").read_text())
    assert info["kind"] == "ExecCredential"
    assert info["spec"]["interactive"] is False
    assert info["spec"]["cluster"] == {
        "server": "https://s",
        "certificate-authority-data": base64.b64encode(b"CA").decode(),
    }


async def test_garbage_plugin_output(tmp_path: Path) -> None:
    from kcm.client._auth import run_exec_plugin

    cfg = ExecConfig(command=sys.executable, args=("-c", "print('hello')"))
    with pytest.raises(ConfigError, match="no valid ExecCredential"):
        await run_exec_plugin(cfg)


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (
            "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1beta1', "
            "'kind': 'ExecCredential', 'status': {'token': 't'}}))",
            "apiVersion 'client.authentication.k8s.io/v1beta1', but "
            "'client.authentication.k8s.io/v1' was requested",
        ),
        (
            "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', "
            "'kind': 'ExecCredential', 'status': {'token': 't', 'expirationTimestamp': 'soon'}}))",
            "invalid expirationTimestamp 'soon'",
        ),
        (
            "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', "
            "'kind': 'ExecCredential', 'status': {'clientCertificateData': 'PEM'}}))",
            "certificate without its key",
        ),
        ("print(json.dumps([1, 2]))", "not an ExecCredential"),
    ],
)
async def test_plugin_output_is_validated(code: str, message: str) -> None:
    from kcm.client._auth import run_exec_plugin

    cfg = ExecConfig(command=sys.executable, args=("-c", f"import json\n{code}"))
    with pytest.raises(ConfigError, match=re.escape(message)):
        await run_exec_plugin(cfg)


async def test_a_plugin_that_hangs_times_out() -> None:
    from kcm.client._auth import run_exec_plugin

    cfg = ExecConfig(
        command=sys.executable, args=("-c", "import time; time.sleep(30)"), timeout=0.3
    )
    with pytest.raises(ConfigError, match=r"did not finish within 0.3s"):
        await run_exec_plugin(cfg)


async def test_a_token_source_replaces_the_credentials_and_refreshes_on_401(
    server: Any,
) -> None:
    """``ApiClient(token_source=...)``: kube-controller-manager's per-controller tokens."""
    calls: list[bool] = []

    async def source(force: bool) -> str:
        calls.append(force)
        return f"t{len(calls)}"

    server.responses.append(lambda r: UNAUTHORIZED)
    server.add(200, POD)
    config = ClientConfig(server="https://k8s.test:6443", qps=-1, token="ignored")
    async with ApiClient(config, transport=httpx.MockTransport(server), token_source=source) as c:
        await c.api(Pod, "ns").get("p")
    assert auth_headers(server) == ["Bearer t1", "Bearer t2"]
    assert calls == [False, True]
