"""The README runs as written: its Python example (in a subprocess, like a user would), its
two Quickstart commands are the ones CI runs, and its kubectl lines work from a second
terminal against a real ``kcm`` process in embedded mode."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.e2e_harness import kcm_command

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def sh_blocks() -> list[str]:
    return [b.strip() for b in re.findall(r"```sh\n(.*?)```", README.read_text(), flags=re.S)]


def test_readme_python_example_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README lost its Python example"
    out = subprocess.run(
        [sys.executable, "-c", blocks[0]], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "MODIFIED 2"


def test_quickstart_has_exactly_the_two_setup_commands() -> None:
    """One command installs and runs kcm, one installs the test extra and runs the suite
    (the same test command as .ci/run); the only other block is the kubectl session."""
    blocks = sh_blocks()
    setup = [b for b in blocks if "pip install" in b]
    assert setup == [
        "pip install '.[cli]' && kcm",
        "pip install -e '.[test,docs]' && python -m pytest",
    ]
    ci = (ROOT / ".ci" / "run").read_text()
    assert "pip install -q -e '.[test,docs]'" in ci
    assert "python -m pytest" in ci
    (session,) = [b for b in blocks if "kubectl" in b]
    lines = session.splitlines()
    assert lines[0].startswith("export KUBECONFIG=")
    assert [line.split()[0] for line in lines[1:]] == ["kubectl"] * 3
    text = README.read_text()
    assert "Until the controller-manager entrypoint lands" not in text
    assert "Manager to come" not in text


@pytest.mark.kubectl
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
@pytest.mark.skipif(shutil.which("bash") is None, reason="the README's shell lines need bash")
def test_readme_kubectl_lines_work_against_kcm(tmp_path: Path) -> None:
    """Run ``kcm`` as the Quickstart's first command does, with a fresh home directory (so
    ``~/.local/share/kcm`` is this test's), then the README's second-terminal lines verbatim
    in bash. Only ``--secure-port=0`` is added: the default health port could be taken on a
    shared test machine."""
    (run_kcm,) = [b for b in sh_blocks() if b.startswith("pip install '.[cli]' &&")]
    assert run_kcm.endswith("&& kcm")
    (session,) = [b for b in sh_blocks() if "kubectl" in b]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBE", "XDG_"))}
    env["HOME"] = str(tmp_path)
    kubeconfig = tmp_path / ".local" / "share" / "kcm" / "kubeconfig"
    log = tmp_path / "kcm.log"
    with open(log, "w") as err:
        proc = subprocess.Popen(
            [*kcm_command(), "--secure-port=0"],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=env,
        )
    try:
        deadline = time.monotonic() + 30
        while not kubeconfig.exists():
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, f"no kubeconfig after 30 s:\n{log.read_text()}"
            time.sleep(0.05)
        out = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", session],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        assert out.returncode == 0, f"{out.stdout}\n{out.stderr}\n{log.read_text()}"
        assert "deployment.apps/web created" in out.stdout
        assert 'deployment "web" successfully rolled out' in out.stdout
        table = out.stdout[out.stdout.index("NAME ") :].splitlines()
        assert table[0].split()[:7] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE"]
        pods = [line.split() for line in table[1:]]
        assert len(pods) == 3
        assert all(p[0].startswith("web-") and p[1:3] == ["1/1", "Running"] for p in pods)
        assert all(p[6].startswith("kcm-node-") for p in pods)  # the NODE column
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=40)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
            raise
        finally:
            assert proc.stdout is not None
            banner = proc.stdout.read()
            proc.stdout.close()
    assert code == 0, log.read_text()
    assert f"export KUBECONFIG={kubeconfig}" in banner  # the line the README tells you to use
