"""``kcm apiserver`` serves in the foreground and writes a kubeconfig kubectl can use."""

from __future__ import annotations

import base64
import shutil
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(args: list[str], kubeconfig: Path) -> subprocess.Popen[str]:
    """``kcm apiserver ARGS`` in the background, once it has written ``kubeconfig``."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "kcm", "apiserver", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 20
    while not kubeconfig.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no kubeconfig written"
        time.sleep(0.05)
    return proc


def _stop(proc: subprocess.Popen[str]) -> tuple[str, str]:
    proc.terminate()
    return proc.communicate(timeout=20)


def _client(config: dict[str, Any], tmp_path: Path, *, with_cert: bool = True) -> httpx.Client:
    """An httpx client trusting the kubeconfig's CA, with its client certificate."""
    cluster, user = config["clusters"][0]["cluster"], config["users"][0]["user"]
    context = ssl.create_default_context(
        cadata=base64.b64decode(cluster["certificate-authority-data"]).decode()
    )
    if with_cert:
        (tmp_path / "admin.crt").write_bytes(base64.b64decode(user["client-certificate-data"]))
        (tmp_path / "admin.key").write_bytes(base64.b64decode(user["client-key-data"]))
        context.load_cert_chain(tmp_path / "admin.crt", tmp_path / "admin.key")
    return httpx.Client(base_url=cluster["server"], verify=context, timeout=10)


def _kubectl(kubeconfig: Path, *args: str) -> str:
    out = subprocess.run(
        ["kubectl", "--kubeconfig", str(kubeconfig), *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return out.stdout.strip()


def test_kcm_apiserver_is_secure_by_default(tmp_path: Path) -> None:
    """HTTPS with a CA kept in the data dir, a kubeconfig (0600) holding an administrator's
    client certificate, 401 for anyone without it; a restart reuses the CA, so the first
    kubeconfig still works."""
    data, kubeconfig = tmp_path / "data", tmp_path / "data" / "kubeconfig"
    port = _free_port()
    proc = _start(["--port", str(port), "--data-dir", str(data)], kubeconfig)
    try:
        assert kubeconfig.stat().st_mode & 0o777 == 0o600
        assert (data / "pki" / "ca.key").stat().st_mode & 0o777 == 0o600
        config = yaml.safe_load(kubeconfig.read_text())
        assert config["clusters"][0]["cluster"]["server"] == f"https://127.0.0.1:{port}"
        with _client(config, tmp_path) as admin:
            r = admin.post(
                "/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "from-cli"}}
            )
            assert r.status_code == 201
        with _client(config, tmp_path, with_cert=False) as stranger:
            r = stranger.get("/api/v1/namespaces/default/configmaps")
            assert (r.status_code, r.json()["reason"]) == (401, "Unauthorized")
        if shutil.which("kubectl"):
            got = _kubectl(kubeconfig, "get", "cm", "from-cli", "-o", "name")
            assert got == "configmap/from-cli"
            assert _kubectl(kubeconfig, "auth", "can-i", "delete", "nodes") == "yes"
            # any user, through impersonation: RBAC answers (jane has no role)
            as_jane = subprocess.run(
                [
                    "kubectl",
                    "--kubeconfig",
                    str(kubeconfig),
                    "auth",
                    "can-i",
                    "list",
                    "pods",
                    "--as",
                    "jane",
                ],
                capture_output=True,
                text=True,
                timeout=30,
            )
            assert (as_jane.returncode, as_jane.stdout.strip()) == (1, "no")
    finally:
        _stop(proc)
    ca = (data / "pki" / "ca.crt").read_bytes()
    kubeconfig.rename(tmp_path / "first-kubeconfig")
    proc = _start(["--port", str(port), "--data-dir", str(data)], kubeconfig)
    try:
        assert (data / "pki" / "ca.crt").read_bytes() == ca
        with _client(yaml.safe_load((tmp_path / "first-kubeconfig").read_text()), tmp_path) as old:
            assert old.get("/api/v1/namespaces/default/configmaps/from-cli").status_code == 200
    finally:
        _stop(proc)
    assert (data / "kcm-apiserver.sqlite3").exists()


def test_plain_http_only_when_asked_for_with_a_warning(tmp_path: Path) -> None:
    """Plain HTTP (a warning), with the limits and encryption at rest flags."""
    kubeconfig = tmp_path / "kubeconfig"
    encryption = tmp_path / "enc.yaml"
    encryption.write_text(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n"
        "- resources: [secrets]\n  providers:\n  - aesgcm:\n      keys:\n"
        "      - {name: k, secret: " + base64.b64encode(b"k" * 32).decode() + "}\n"
    )
    port = _free_port()
    proc = _start(
        [
            "--port",
            str(port),
            "--insecure-http",
            "--data-dir",
            str(tmp_path / "data"),
            "--kubeconfig-out",
            str(kubeconfig),
            "--max-request-body-bytes",
            "2000",
            "--encryption-provider-config",
            str(encryption),
        ],
        kubeconfig,
    )
    try:
        config = yaml.safe_load(kubeconfig.read_text())
        server = config["clusters"][0]["cluster"]["server"]
        assert server == f"http://127.0.0.1:{port}"
        r = httpx.post(
            f"{server}/api/v1/namespaces/default/configmaps",
            json={"metadata": {"name": "from-cli"}},
        )
        assert r.status_code == 201
        r = httpx.post(
            f"{server}/api/v1/namespaces/default/configmaps",
            json={"metadata": {"name": "big"}, "data": {"k": "x" * 2000}},
        )
        assert (r.status_code, r.json()["message"]) == (
            413,
            "Request entity too large: limit is 2000",
        )
        r = httpx.post(
            f"{server}/api/v1/namespaces/default/secrets",
            json={"metadata": {"name": "s"}, "data": {"k": base64.b64encode(b"plain!").decode()}},
        )
        assert r.status_code == 201
        wal = (tmp_path / "data" / "kcm-apiserver.sqlite3-wal").read_bytes()
        assert base64.b64encode(b"plain!") not in wal
        assert (
            b"k8s:enc:aesgcm:v1:k:"
            in (tmp_path / "data" / "kcm-apiserver.sqlite3-wal").read_bytes()
        )
        if shutil.which("kubectl"):
            out = subprocess.run(
                ["kubectl", "--kubeconfig", str(kubeconfig), "get", "cm", "from-cli", "-o", "name"],
                capture_output=True,
                text=True,
                timeout=30,
            )
            assert out.stdout.strip() == "configmap/from-cli"
    finally:
        _, err = _stop(proc)
    assert "warning: --insecure-http: serving plain HTTP without authentication" in err


@pytest.mark.parametrize("argv", [["apiserver", "--help"]])
def test_help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    from kcm.cli import main

    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 0
    assert "--kubeconfig-out" in capsys.readouterr().out
