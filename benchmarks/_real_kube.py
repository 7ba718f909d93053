"""Starting and stopping ``real-kube`` (a real kube-apiserver + etcd, optionally the Go
kube-controller-manager) for the benchmarks that measure kcm against it."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

REAL_KUBE = Path(os.environ.get("REAL_KUBE", "/work/shared/tools/real-kube"))
REAL_KUBE_BIN = Path(os.environ.get("REAL_KUBE_HOME", Path.home() / ".cache" / "real-kube")) / "bin"


def available() -> bool:
    """Whether the script and both binaries are there."""
    return REAL_KUBE.exists() and all(
        (REAL_KUBE_BIN / name).exists() for name in ("kube-apiserver", "kube-controller-manager")
    )


def start(
    directory: Path, api_port: int, etcd_port: int, *, with_kcm: bool, env: dict[str, str]
) -> list[int]:
    """``real-kube start``; the pids it started (etcd, kube-apiserver[, the manager])."""
    args = [str(REAL_KUBE), "start", str(directory), str(api_port), str(etcd_port)]
    subprocess.run(
        [*args, "--with-kcm"] if with_kcm else args,
        check=True,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
    )
    return [int(p) for p in (directory / "pids").read_text().split()]


def stop(directory: Path, pids: list[int], grace: float = 30.0) -> None:
    """``real-kube stop``, then wait until the processes are gone (SIGKILL after ``grace``
    seconds): the next run reuses the ports, and a stale etcd would serve it old data."""
    subprocess.run([str(REAL_KUBE), "stop", str(directory)], check=False)
    deadline = time.monotonic() + grace
    for pid in pids:
        while Path(f"/proc/{pid}").exists() and _alive(pid):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
            time.sleep(0.2)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
