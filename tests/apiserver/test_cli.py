"""``kcm apiserver`` serves in the foreground and writes a kubeconfig kubectl can use."""

from __future__ import annotations

import base64
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_kcm_apiserver_command(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    encryption = tmp_path / "enc.yaml"
    encryption.write_text(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n"
        "- resources: [secrets]\n  providers:\n  - aesgcm:\n      keys:\n"
        "      - {name: k, secret: " + base64.b64encode(b"k" * 32).decode() + "}\n"
    )
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kcm",
            "apiserver",
            "--port",
            str(port),
            "--data-dir",
            str(tmp_path / "data"),
            "--kubeconfig-out",
            str(kubeconfig),
            "--max-request-body-bytes",
            "2000",
            "--encryption-provider-config",
            str(encryption),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 20
        while not kubeconfig.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no kubeconfig written"
            time.sleep(0.05)
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
        proc.terminate()
        proc.communicate(timeout=20)
    assert (tmp_path / "data" / "kcm-apiserver.sqlite3").exists()


@pytest.mark.parametrize("argv", [["apiserver", "--help"]])
def test_help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    from kcm.cli import main

    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 0
    assert "--kubeconfig-out" in capsys.readouterr().out
