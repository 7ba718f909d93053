"""Requests per second of kcm's client against raw httpx and raw aiohttp (get, create, patch).

One stub API server runs in a separate process: a raw asyncio protocol that answers every
request with canned Kubernetes JSON (a ~2 KiB Pod), so the server is not the bottleneck. Every
client then runs the same operations at concurrency 1, 50 and 500 in the same run:

* ``aiohttp``: raw aiohttp ``ClientSession`` + ``msgspec.json.decode`` of the body (the floor);
* ``httpx``: raw ``httpx.AsyncClient`` (httpcore pool) + ``msgspec.json.decode``;
* ``kcm``: ``ApiClient`` with its default transport (aiohttp-backed on asyncio), typed ``Pod``
  decoding, rate limit off (``qps=-1``);
* ``kcm-httpx``: ``ApiClient`` forced onto httpx's own transport (what trio uses).

All clients use a pool of 100 connections. Clients are interleaved round by round and each
cell keeps the best of ``--repeat`` rounds. Besides wall-clock requests/s the script reports
requests per CPU-second of the client process, which shared machines disturb much less.

    python benchmarks/requests.py            # full run (~4 minutes)
    python benchmarks/requests.py --quick    # a short run

``--apiserver`` measures instead what one request costs kcm's client in CPU against the real
thing: ``kcm apiserver`` in its own process, HTTPS with a bearer token, and kcm's ``ApiClient``
with its defaults (rate limit off) sending GET, PATCH (merge patch of a label) and POST (a pod
with ``generateName``) at concurrency 10. It reports the client process's CPU
(``time.process_time``) per request in microseconds, the median of ``--repeat`` runs. This is
the figure behind the controller manager's CPU on a real cluster (docs/benchmarks.md,
controllers_vs_go), and the one to A/B client changes with.

    python benchmarks/requests.py --apiserver [--requests 2000] [--repeat 3]

``--apiserver --idle-gap SECONDS`` instead measures the CPU of the first GET after the client
has been quiet for that long (a controller between bursts): cheap when the pooled connection
is still open, a TLS handshake when it is not.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import socket
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import msgspec

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

POD = {
    "kind": "Pod",
    "apiVersion": "v1",
    "metadata": {
        "name": "web-0",
        "namespace": "default",
        "uid": "6b1f0a4e-0c0e-4a53-9d3c-0d3c6f1f0a4e",
        "resourceVersion": "123456",
        "creationTimestamp": "2026-01-01T00:00:00Z",
        "labels": {"app": "web", "tier": "frontend", "pod-template-hash": "5d8f7c9b6"},
        "annotations": {"kubernetes.io/psp": "restricted", "note": "x" * 200},
        "ownerReferences": [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": "web-5d8f7c9b6",
                "uid": "0e4a6b1f-0c0e-4a53-9d3c-0d3c6f1f0a4e",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    },
    "spec": {
        "containers": [
            {
                "name": "web",
                "image": "nginx:1.27",
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "env": [{"name": f"VAR_{i}", "value": f"value-{i}"} for i in range(10)],
                "resources": {
                    "requests": {"cpu": "100m", "memory": "128Mi"},
                    "limits": {"cpu": "500m", "memory": "256Mi"},
                },
            }
        ],
        "nodeName": "node-1",
        "restartPolicy": "Always",
        "serviceAccountName": "default",
    },
    "status": {
        "phase": "Running",
        "podIP": "10.0.0.12",
        "hostIP": "192.168.1.10",
        "conditions": [
            {"type": t, "status": "True", "lastTransitionTime": "2026-01-01T00:00:05Z"}
            for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
        ],
    },
}
POD_BYTES = json.dumps(POD, separators=(",", ":")).encode()
PATH = "/api/v1/namespaces/default/pods"


# ----------------------------------------------------------------------------- stub server


class _StubProtocol(asyncio.Protocol):
    """Answers every HTTP/1.1 request with the canned Pod (keep-alive, Content-Length)."""

    RESPONSE = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
        + str(len(POD_BYTES)).encode()
        + b"\r\n\r\n"
        + POD_BYTES
    )
    CREATED = RESPONSE.replace(b"200 OK", b"201 Created", 1)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport: asyncio.Transport = transport  # type: ignore[assignment]
        self.buf = b""

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buf[:end]
            length = 0
            for line in head.split(b"\r\n")[1:]:
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            total = end + 4 + length
            if len(self.buf) < total:
                return
            method = head[: head.find(b" ")]
            self.buf = self.buf[total:]
            self.transport.write(self.CREATED if method == b"POST" else self.RESPONSE)


def _serve(sock: socket.socket) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(_StubProtocol, sock=sock, backlog=2048)
        await server.serve_forever()

    asyncio.run(main())


def start_stub() -> tuple[multiprocessing.Process, str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    port = sock.getsockname()[1]
    proc = multiprocessing.get_context("fork").Process(target=_serve, args=(sock,), daemon=True)
    proc.start()
    sock.close()
    return proc, f"http://127.0.0.1:{port}"


# ----------------------------------------------------------------------------- clients

Op = Callable[[int], Awaitable[Any]]
POOL = 100
PATCH_BODY = b'{"metadata":{"labels":{"bench":"1"}}}'
CREATE_BODY = msgspec.json.encode(
    {k: v for k, v in POD.items() if k != "status"} | {"metadata": {"name": "web-0"}}
)


Result = tuple[float, float]  # (requests per wall second, requests per client CPU second)


async def run_ops(op: Op, concurrency: int, seconds: float) -> Result:
    """Call ``op`` from ``concurrency`` workers for ``seconds`` (wall clock).

    Returns requests per wall-clock second and per second of this process's CPU time. The
    second figure is what the client costs; it is robust against other load on the machine.
    """
    done = 0
    deadline = time.perf_counter() + seconds

    async def worker() -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            await op(done)
            done += 1

    start, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return done / wall, done / max(cpu, 1e-9)


async def bench_aiohttp(url: str, kind: str, concurrency: int, seconds: float) -> Result:
    import aiohttp

    decode = msgspec.json.Decoder().decode
    connector = aiohttp.TCPConnector(limit=POOL)
    async with aiohttp.ClientSession(url, connector=connector) as session:
        headers = {"Content-Type": "application/json"}

        async def get(i: int) -> Any:
            async with session.get(f"{PATH}/web-0") as r:
                return decode(await r.read())

        async def create(i: int) -> Any:
            async with session.post(PATH, data=CREATE_BODY, headers=headers) as r:
                return decode(await r.read())

        async def patch(i: int) -> Any:
            h = {"Content-Type": "application/merge-patch+json"}
            async with session.patch(f"{PATH}/web-0", data=PATCH_BODY, headers=h) as r:
                return decode(await r.read())

        op = {"get": get, "create": create, "patch": patch}[kind]
        await op(0)
        return await run_ops(op, concurrency, seconds)


async def bench_httpx(url: str, kind: str, concurrency: int, seconds: float) -> Result:
    import httpx

    decode = msgspec.json.Decoder().decode
    limits = httpx.Limits(max_connections=POOL, max_keepalive_connections=POOL)
    async with httpx.AsyncClient(base_url=url, limits=limits) as client:
        headers = {"Content-Type": "application/json"}

        async def get(i: int) -> Any:
            return decode((await client.get(f"{PATH}/web-0")).content)

        async def create(i: int) -> Any:
            return decode((await client.post(PATH, content=CREATE_BODY, headers=headers)).content)

        async def patch(i: int) -> Any:
            h = {"Content-Type": "application/merge-patch+json"}
            r = await client.patch(f"{PATH}/web-0", content=PATCH_BODY, headers=h)
            return decode(r.content)

        op = {"get": get, "create": create, "patch": patch}[kind]
        await op(0)
        return await run_ops(op, concurrency, seconds)


async def bench_kcm(
    url: str, kind: str, concurrency: int, seconds: float, *, backend: str = "auto"
) -> Result:
    from kcm.client import ApiClient, ClientConfig
    from kcm.client._transport import build_ssl_context, build_transport
    from kcm.models import ObjectMeta, Pod, decode

    config = ClientConfig(server=url, qps=-1)
    transport = build_transport(
        config, ssl_context=build_ssl_context(config), max_connections=POOL, backend=backend
    )
    pod = decode(Pod, CREATE_BODY)
    assert isinstance(pod.metadata, ObjectMeta)
    async with ApiClient(config, transport=transport) as client:
        api = client.api(Pod, namespace="default")

        async def get(i: int) -> Any:
            return await api.get("web-0")

        async def create(i: int) -> Any:
            return await api.create(pod)

        async def patch(i: int) -> Any:
            return await api.patch("web-0", {"metadata": {"labels": {"bench": "1"}}})

        op = {"get": get, "create": create, "patch": patch}[kind]
        await op(0)
        rps = await run_ops(op, concurrency, seconds)
    await transport.aclose()
    return rps


CLIENTS: dict[str, Callable[..., Awaitable[Result]]] = {
    "aiohttp": bench_aiohttp,
    "httpx": bench_httpx,
    "kcm": bench_kcm,
    "kcm-httpx": lambda *a: bench_kcm(*a, backend="httpx"),
}


# ----------------------------------------------------------------------------- --apiserver

APISERVER_OPS = ("get", "patch", "create")
APISERVER_CONCURRENCY = 10
TOKEN = "bench-token"


def start_apiserver(workdir: Path) -> tuple[Any, str]:
    """``kcm apiserver`` (HTTPS, a bearer token) in its own process; its kubeconfig's path."""
    import subprocess

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    kubeconfig = workdir / "kubeconfig"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-m", "kcm", "apiserver", "--port", str(port), "--token", TOKEN,
         "--kubeconfig-out", str(kubeconfig)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if kubeconfig.exists():
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return proc, str(kubeconfig)
            except OSError:
                pass
        if proc.poll() is not None:
            raise SystemExit(f"kcm apiserver exited with {proc.returncode}")
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("kcm apiserver did not start within 60 s")


async def _timed(op: Op, requests: int) -> float:
    """Client CPU microseconds per call of ``op`` (``requests`` calls from 10 workers)."""
    for i in range(20):  # warm: connections open, caches filled
        await op(i)
    left = requests

    async def worker() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            await op(left)

    cpu = time.process_time()
    await asyncio.gather(*(worker() for _ in range(APISERVER_CONCURRENCY)))
    return (time.process_time() - cpu) / requests * 1e6


async def aiohttp_cpu_per_request(kubeconfig: str, kind: str, requests: int) -> float:
    """The floor: raw aiohttp with the same TLS context and token, typed decoding of the Pod."""
    import aiohttp

    from kcm.client import load_kubeconfig
    from kcm.client._transport import build_ssl_context
    from kcm.models import Pod
    from kcm.models import decoder as model_decoder

    config = load_kubeconfig(kubeconfig)
    decoder = model_decoder(Pod)
    connector = aiohttp.TCPConnector(limit=POOL, ssl=build_ssl_context(config))
    base = config.server.rstrip("/") + PATH
    auth = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json"}
    post = {**auth, "Content-Type": "application/json"}
    merge = {**auth, "Content-Type": "application/merge-patch+json"}
    create = msgspec.json.encode(
        {k: v for k, v in POD.items() if k != "status"} | {"metadata": {"generateName": "web-"}}
    )
    async with aiohttp.ClientSession(connector=connector) as session:

        async def call(method: str, url: str, headers: dict[str, str], data: Any = None) -> Any:
            async with session.request(method, url, headers=headers, data=data) as r:
                body = await r.read()
                if r.status >= 400:
                    raise RuntimeError(f"{method} {url}: {r.status} {body[:200]!r}")
                return decoder.decode(body)

        ops: dict[str, Op] = {
            "get": lambda i: call("GET", f"{base}/web-0", auth),
            "patch": lambda i: call(
                "PATCH",
                f"{base}/web-0",
                merge,
                msgspec.json.encode({"metadata": {"labels": {"bench": str(i)}}}),
            ),
            "create": lambda i: call("POST", base, post, create),
        }
        return await _timed(ops[kind], requests)


async def cpu_per_request(kubeconfig: str, kind: str, requests: int) -> float:
    """Client CPU microseconds per request of ``requests`` ``kind`` requests (HTTPS + token)."""
    from kcm.client import ApiClient, load_kubeconfig
    from kcm.models import ObjectMeta, Pod, decode

    base = load_kubeconfig(kubeconfig)
    config = msgspec.structs.replace(
        base, token=TOKEN, client_certificate_data=None, client_key_data=None,
        client_certificate=None, client_key=None, qps=-1,
    )  # fmt: skip
    pod = decode(Pod, CREATE_BODY)
    assert isinstance(pod.metadata, ObjectMeta)
    pod = msgspec.structs.replace(
        pod, metadata=msgspec.structs.replace(pod.metadata, name=None, generate_name="web-")
    )
    async with ApiClient(config) as client:
        api = client.api(Pod, namespace="default")
        try:
            await api.create(msgspec.structs.replace(pod, metadata=ObjectMeta(name="web-0")))
        except Exception:  # already there from an earlier run
            pass
        ops: dict[str, Op] = {
            "get": lambda i: api.get("web-0"),
            "patch": lambda i: api.patch("web-0", {"metadata": {"labels": {"bench": str(i)}}}),
            "create": lambda i: api.create(pod),
        }
        return await _timed(ops[kind], requests)


async def cpu_after_idle(kubeconfig: str, gap: float) -> float:
    """Client CPU microseconds of one GET after ``gap`` seconds without requests."""
    from kcm.client import ApiClient, load_kubeconfig
    from kcm.models import Pod

    base = load_kubeconfig(kubeconfig)
    config = msgspec.structs.replace(
        base, token=TOKEN, client_certificate_data=None, client_key_data=None,
        client_certificate=None, client_key=None, qps=-1,
    )  # fmt: skip
    async with ApiClient(config) as client:
        api = client.api(Pod, namespace="default")
        for _ in range(5):
            await api.get("web-0")
        await asyncio.sleep(gap)
        cpu = time.process_time()
        await api.get("web-0")
        return (time.process_time() - cpu) * 1e6


APISERVER_CLIENTS = {"kcm": cpu_per_request, "aiohttp": aiohttp_cpu_per_request}


def main_apiserver(requests: int, repeat: int, clients: list[str], idle_gap: float) -> int:
    import statistics
    import tempfile

    with tempfile.TemporaryDirectory(prefix="kcm-bench-") as tmp:
        proc, kubeconfig = start_apiserver(Path(tmp))
        try:
            asyncio.run(cpu_per_request(kubeconfig, "get", 10))  # creates the pod
            if idle_gap:
                runs = [asyncio.run(cpu_after_idle(kubeconfig, idle_gap)) for _ in range(repeat)]
                print(f"client CPU (us) of the first GET after {idle_gap:g} s idle, kcm")
                print(
                    f"median {statistics.median(runs):.0f}   runs: "
                    + " ".join(f"{v:.0f}" for v in runs)
                )
                return 0
            results: dict[tuple[str, str], list[float]] = {
                (c, k): [] for c in clients for k in APISERVER_OPS
            }
            for _ in range(repeat):  # rounds alternate the clients and operations
                for kind in APISERVER_OPS:
                    for c in clients:
                        run = APISERVER_CLIENTS[c](kubeconfig, kind, requests)
                        results[c, kind].append(asyncio.run(run))
        finally:
            proc.terminate()
            proc.wait()
    print(
        f"client CPU per request (us), kcm apiserver over HTTPS + token, c={APISERVER_CONCURRENCY}"
    )
    print(f"load average {os.getloadavg()[0]:.2f}; median of {repeat} x {requests} requests")
    for c in clients:
        for kind in APISERVER_OPS:
            runs = " ".join(f"{v:.0f}" for v in results[c, kind])
            print(f"{c:>8} {kind:>7} {statistics.median(results[c, kind]):>7.0f}   runs: {runs}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="short run")
    parser.add_argument(
        "--apiserver", action="store_true",
        help="client CPU per request against `kcm apiserver` over HTTPS with a token",
    )  # fmt: skip
    parser.add_argument("--requests", type=int, default=2000, help="requests per --apiserver run")
    parser.add_argument(
        "--idle-gap", type=float, default=0.0,
        help="with --apiserver: CPU of the first GET after this many idle seconds",
    )  # fmt: skip
    parser.add_argument("--repeat", type=int, default=None, help="runs per cell (best is kept)")
    parser.add_argument("--clients", default=",".join(CLIENTS))
    args = parser.parse_args(argv)
    if args.apiserver:
        names = args.clients.split(",") if args.clients != ",".join(CLIENTS) else ["kcm"]
        return main_apiserver(args.requests, args.repeat or 3, names, args.idle_gap)
    ops = ("get", "create", "patch")
    levels = (1, 50, 500)
    seconds = 0.5 if args.quick else 1.5
    repeat = args.repeat or (2 if args.quick else 5)
    clients = args.clients.split(",")
    proc, url = start_stub()
    wall: dict[str, dict[str, dict[str, float]]] = {c: {} for c in clients}
    cpu: dict[str, dict[str, dict[str, float]]] = {c: {} for c in clients}
    try:
        time.sleep(0.3)
        for kind in ops:
            for level in levels:
                key = str(level)
                for name in clients:
                    wall[name].setdefault(kind, {})[key] = 0.0
                    cpu[name].setdefault(kind, {})[key] = 0.0
                # rounds interleave the clients, so each sees the same background load
                for _ in range(repeat):
                    for name in clients:
                        w, c = asyncio.run(CLIENTS[name](url, kind, level, seconds))
                        wall[name][kind][key] = round(max(wall[name][kind][key], w), 1)
                        cpu[name][kind][key] = round(max(cpu[name][kind][key], c), 1)
                row = "  ".join(f"{n}={wall[n][kind][key]:>7.0f}" for n in clients)
                print(f"{kind:>6} c={level:<4} {row}", flush=True)
    finally:
        proc.terminate()
        proc.join()

    for title, table in (
        ("requests/s (wall clock, best run)", wall),
        ("requests per client CPU-second", cpu),
    ):
        print(f"\n{title}")
        header = f"{'op':>6} {'conc':>5} " + " ".join(f"{c:>10}" for c in clients)
        print(header + "  aiohttp/kcm")
        for kind in ops:
            for level in levels:
                cells = " ".join(f"{table[c][kind][str(level)]:>10.0f}" for c in clients)
                ratio = ""
                if "kcm" in table and "aiohttp" in table:
                    r = table["aiohttp"][kind][str(level)] / table["kcm"][kind][str(level)]
                    ratio = f"  {r:>10.2f}"
                print(f"{kind:>6} {level:>5} {cells}{ratio}")

    out = ROOT / "benchmarks" / "results" / "requests.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "quick": args.quick,
        "repeat": repeat,
        "seconds_per_run": seconds,
        "pool": POOL,
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
    }
    out.write_text(json.dumps({"meta": meta, "rps": wall, "rps_per_cpu": cpu}, indent=2) + "\n")
    _plot(wall, cpu, ops, levels, ROOT / "docs" / "benchmarks" / "requests.png")
    print(f"\nwrote {out.relative_to(ROOT)} and docs/benchmarks/requests.png")
    return 0


def _plot(
    wall: dict[str, dict[str, dict[str, float]]],
    cpu: dict[str, dict[str, dict[str, float]]],
    ops: tuple[str, ...],
    levels: tuple[int, ...],
    path: Path,
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, grid = plt.subplots(2, len(ops), figsize=(4.2 * len(ops), 6.6), sharey=False)
    width = 0.8 / len(wall)
    for row, (table, label) in enumerate(((wall, "requests/s"), (cpu, "requests / CPU-s"))):
        for ax, kind in zip(grid[row], ops, strict=True):
            for i, (name, per_op) in enumerate(table.items()):
                xs = [j + i * width for j in range(len(levels))]
                ax.bar(xs, [per_op[kind][str(c)] for c in levels], width, label=name)
            ax.set_xticks([j + width * (len(table) - 1) / 2 for j in range(len(levels))])
            ax.set_xticklabels([f"c={c}" for c in levels])
            ax.set_title(f"{kind} ({label})", fontsize=9)
            ax.set_ylabel(label)
    grid[0][0].legend(fontsize=8)
    fig.suptitle("kcm client vs raw httpx / aiohttp (one local stub server)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    raise SystemExit(main())
