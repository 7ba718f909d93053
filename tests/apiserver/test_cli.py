"""``kcm apiserver`` serves in the foreground and writes a kubeconfig kubectl can use."""

from __future__ import annotations

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
