"""Stopping the processes a benchmark started (kcm, its API server)."""

from __future__ import annotations

import subprocess

__all__ = ["terminate"]


def terminate(process: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    """SIGTERM, so the process can shut down cleanly, then SIGKILL if it has not exited
    within ``timeout`` seconds; returns once it has exited."""
    process.terminate()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
