"""``kcm bench``'s embedded API server, in its own process so it does not share the benchmarked
client's CPU.

``python -m kcm.cli._bench_server HISTORY KUBECONFIG`` serves plain HTTP on a free loopback
port with ``HISTORY`` watch events kept (enough to replay every update), writes a kubeconfig
for it, prints the URL and serves until its standard input closes. :func:`start_server` does
all of that from the parent.
"""

from __future__ import annotations

import subprocess
import sys

import anyio

__all__ = ["start_server"]


def start_server(history: int, kubeconfig: str) -> tuple[subprocess.Popen[str], str]:
    """Start the server process; returns it and its URL once it serves.

    Raises:
        RuntimeError: the server did not start.
    """
    proc = subprocess.Popen(
        [sys.executable, "-m", "kcm.cli._bench_server", str(history), kubeconfig],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url:
        proc.wait()
        raise RuntimeError(f"the embedded API server did not start (exit status {proc.returncode})")
    return proc, url


async def _serve(history: int, kubeconfig: str) -> None:
    from kcm.apiserver import ApiServer

    async with ApiServer(history=history) as server:
        server.write_kubeconfig(kubeconfig)
        print(server.url, flush=True)
        await anyio.to_thread.run_sync(sys.stdin.read)  # until the parent closes our stdin


if __name__ == "__main__":
    anyio.run(_serve, int(sys.argv[1]), sys.argv[2])
