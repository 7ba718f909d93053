"""Memory of ``kcm apiserver`` around a 300 MB POST (the request-body limit's figure).

Starts ``kcm apiserver`` in its own process (from ``--root``, so the code before and after the
limit can be compared), reads its resident memory, streams a 300 MB ConfigMap create at it
(stopping when the server closes the connection), and reads its memory again and its peak
(``VmHWM``). Linux only (``/proc``).

    python benchmarks/body_limit.py                      # this tree
    python benchmarks/body_limit.py --root /work/main    # another checkout, for "before"
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _memory(pid: int) -> dict[str, float]:
    """Resident and peak resident memory of ``pid``, in MB."""
    fields: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return fields


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_ready(port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                if b" 200 " in s.recv(100):
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("kcm apiserver did not become ready")


def _post(port: int, size: int) -> tuple[str, int, float]:
    """Stream a ``size``-byte ConfigMap create; the status line (if any), bytes sent, seconds."""
    head = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"k":"'
    tail = b'"}}'
    chunk = b"x" * (1 << 20)
    started = time.monotonic()
    sent = 0
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(
            b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n"
            b"Content-Type: application/json\r\n" + f"Content-Length: {size}\r\n\r\n".encode()
        )
        try:
            s.sendall(head)
            sent = len(head)
            while sent < size - len(tail):
                piece = chunk[: size - len(tail) - sent]
                s.sendall(piece)
                sent += len(piece)
            s.sendall(tail)
            sent += len(tail)
        except OSError:
            pass  # the server answered and closed: the point
        s.settimeout(120)
        try:
            answer = s.recv(200).split(b"\r\n", 1)[0].decode()
        except OSError as exc:
            answer = f"no answer ({exc})"
    return answer, sent, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", type=Path, default=ROOT, help="the kcm checkout to run")
    parser.add_argument("--mb", type=int, default=300, help="body size in MB")
    args = parser.parse_args()
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(args.root)}
    server = subprocess.Popen(
        [sys.executable, "-m", "kcm", "apiserver", "--port", str(port)],
        env=env,
        cwd=args.root,  # ``-m`` puts the working directory first on sys.path
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_ready(port)
        before = _memory(server.pid)
        answer, sent, seconds = _post(port, args.mb * 1_000_000)
        time.sleep(1)  # let the server finish with the request before reading its memory
        after = _memory(server.pid)
    finally:
        server.terminate()
        server.wait(10)
    print(
        json.dumps(
            {
                "root": str(args.root),
                "body_mb": args.mb,
                "answer": answer,
                "sent_mb": round(sent / 1e6, 1),
                "seconds": round(seconds, 2),
                "rss_before_mb": round(before["VmRSS"], 1),
                "rss_after_mb": round(after["VmRSS"], 1),
                "peak_rss_mb": round(after["VmHWM"], 1),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
