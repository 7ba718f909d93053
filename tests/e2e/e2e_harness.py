"""Helpers of the end-to-end tests: ``kcm`` as a real process, driven with ``kubectl``."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

T = TypeVar("T")

needs_kubectl = [
    pytest.mark.kubectl,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

FAST_SIMULATION = [
    "--simulate-pod-start-delay=200ms",
    "--simulate-pod-ready-delay=200ms",
    "--simulate-job-duration=1s",
    "--secure-port=0",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def clean_env() -> dict[str, str]:
    """The environment minus anything that points at a real cluster."""
    env = dict(os.environ)
    for name in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"):
        env.pop(name, None)
    return env


def wait_for(what: str, check: Callable[[], T | None], within: float = 30.0) -> T:
    """Poll ``check`` (it runs kubectl or reads a file) until it returns a truthy value."""
    deadline = time.monotonic() + within
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {within} s waiting for {what}")
        time.sleep(0.1)


@dataclass
class Process:
    """A ``kcm`` child process whose stderr goes to a file."""

    proc: subprocess.Popen[str]
    log: Path

    def logs(self) -> str:
        return self.log.read_text() if self.log.exists() else ""

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 40.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
            raise AssertionError(f"kcm did not stop within {timeout} s:\n{self.logs()}") from None


def kcm_command() -> list[str]:
    """The ``kcm`` console script, as a user runs it: the one installed beside this Python
    (the virtualenv's), else the first on ``PATH``; ``python -m kcm`` only without either."""
    script = shutil.which("kcm", path=str(Path(sys.executable).parent)) or shutil.which("kcm")
    return [script] if script else [sys.executable, "-m", "kcm"]


@contextmanager
def kcm_process(
    args: list[str], log: Path, *, env: dict[str, str] | None = None
) -> Iterator[Process]:
    """Run ``kcm <args>`` (:func:`kcm_command`); stop it with SIGTERM on exit (if still
    running)."""
    with open(log, "w") as err:
        proc = subprocess.Popen(
            [*kcm_command(), *args],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=env if env is not None else clean_env(),
        )
    process = Process(proc, log)
    try:
        yield process
    finally:
        if proc.poll() is None:
            process.stop()
        if proc.stdout is not None:
            proc.stdout.close()


@dataclass
class Kubectl:
    kubeconfig: Path

    def run(self, *args: str, input: str | None = None, check: bool = True) -> str:
        out = subprocess.run(
            ["kubectl", "--kubeconfig", str(self.kubeconfig), *args],
            input=input,
            capture_output=True,
            text=True,
            timeout=60,
        )
        if check and out.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {out.stderr}")
        return out.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "-o", "json"))

    def items(self, *args: str) -> list[Any]:
        return list(self.json("get", *args)["items"])


@contextmanager
def embedded_kcm(tmp_path: Path, *extra: str) -> Iterator[tuple[Process, Kubectl]]:
    """``kcm`` in embedded mode on a fresh data dir, with fast simulation timings; yields
    once kubectl sees the simulated nodes Ready."""
    data = tmp_path / "kcm-data"
    with kcm_process(
        [f"--data-dir={data}", *FAST_SIMULATION, *extra], tmp_path / "kcm.log"
    ) as process:
        kubeconfig = data / "kubeconfig"

        def written() -> bool:
            assert process.proc.poll() is None, process.logs()
            return kubeconfig.exists()

        wait_for("the kubeconfig", written)
        kubectl = Kubectl(kubeconfig)

        def nodes_ready() -> bool:
            nodes = kubectl.items("nodes")
            return len(nodes) == 3 and all(
                any(
                    c["type"] == "Ready" and c["status"] == "True"
                    for c in n["status"]["conditions"]
                )
                for n in nodes
            )

        wait_for("3 Ready nodes", nodes_ready)
        yield process, kubectl
