"""Metadata-only informers and gzip: memory per cached object and LIST throughput.

    python benchmarks/metadata_compression.py [--pods 20000] [--repeats 3] [--quick]

Processes, so no measurement shares an interpreter with another: a **server** (aiohttp)
serving the benchmark corpus's pods (``benchmarks/_corpus.py``, ~4.5 KB each with
managedFields) in pages as kube-apiserver does — ``Accept: ...;as=PartialObjectMetadataList;
g=meta.k8s.io;v=v1`` gets each pod's metadata only, ``Accept-Encoding: gzip`` a gzip (level 4,
compressed per request, as kube-apiserver) of any body over 128 KiB; a **link** proxy
simulating a remote API server (100 Mbit/s each way and 10 ms round trip: every chunk is
held 5 ms and the bytes queue behind each other at the link's rate) for the ``remote`` runs;
and one **client** process per run: a kcm ``SharedIndexInformer`` listing all pods in pages
of 500 until synced. Each client reports wall time, its own CPU time (``process_time``), its
settled RSS growth per cached object and its peak RSS growth; the server's CPU time for the
run is read from ``/proc``. Every scenario runs ``--repeats`` times, interleaved, and the
median is reported.

Scenarios: ``full`` (Pod informer, every field kept), ``metadata`` (the factory's
``metadata_informer``, metadata whole) and, for the garbage collector's cache
(``strip_managed_fields`` as its monitors), ``gc-before`` (whole pods over the wire, decoded
as PartialObjectMetadata: what kcm did before) and ``gc-after`` (metadata over the wire).

Results: ``benchmarks/results/metadata_compression.json``; plot:
``docs/benchmarks/metadata_compression.png`` (needs matplotlib).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

from _memory import settled_rss  # benchmarks/ (the script's directory)

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "metadata_compression.json"
PLOT = ROOT / "docs" / "benchmarks" / "metadata_compression.png"
TICK = os.sysconf("SC_CLK_TCK")
GZIP_THRESHOLD = 128 * 1024
RATE = 100e6 / 8  # bytes per second each way
ONE_WAY = 0.005  # seconds
NAMESPACE = "bench"

# --------------------------------------------------------------------------- the server


def _serve(pods: int) -> None:
    """An API server for one namespace's pods: list (paged, metadata or whole, gzip or not)
    and a watch that stays open and quiet."""
    from aiohttp import web

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _corpus import make_pod

    whole = []
    metadata = []
    for i in range(pods):
        pod = make_pod(i, namespace=NAMESPACE)
        whole.append(json.dumps(pod, separators=(",", ":")).encode())
        partial = {
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": pod["metadata"],
        }
        metadata.append(json.dumps(partial, separators=(",", ":")).encode())
    sent = {"bytes": 0}

    async def pods_handler(request: web.Request) -> web.StreamResponse:
        if request.query.get("watch") in ("1", "true"):
            stream = web.StreamResponse(headers={"Content-Type": "application/json"})
            await stream.prepare(request)
            await asyncio.sleep(3600)
            return stream
        as_metadata = "as=PartialObjectMetadataList" in request.headers.get("Accept", "")
        items = metadata if as_metadata else whole
        limit = int(request.query.get("limit") or len(items))
        start = int(request.query.get("continue") or 0)
        end = min(start + limit, len(items))
        meta = {"resourceVersion": "100"}
        if end < len(items):
            meta["continue"] = str(end)
        head = {
            "kind": "PartialObjectMetadataList" if as_metadata else "PodList",
            "apiVersion": "meta.k8s.io/v1" if as_metadata else "v1",
            "metadata": meta,
        }
        body = json.dumps(head, separators=(",", ":")).encode()[:-1]
        body += b',"items":[' + b",".join(items[start:end]) + b"]}"
        headers = {"Content-Type": "application/json"}
        tokens = (t.strip() for t in request.headers.get("Accept-Encoding", "").split(","))
        if "gzip" in tokens and len(body) > GZIP_THRESHOLD:
            packer = zlib.compressobj(4, zlib.DEFLATED, 31)
            body = packer.compress(body) + packer.flush()
            headers["Content-Encoding"] = "gzip"
        sent["bytes"] += len(body)
        return web.Response(body=body, headers=headers)

    async def stats(request: web.Request) -> web.Response:
        return web.json_response(sent)

    async def main() -> None:
        app = web.Application()
        app.router.add_get(f"/api/v1/namespaces/{NAMESPACE}/pods", pods_handler)
        app.router.add_get("/stats", stats)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        print(port, flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


# --------------------------------------------------------------------------- the link


def _link(upstream_port: int) -> None:
    """A TCP proxy with a 100 Mbit/s, 10 ms round-trip link each way."""

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()
        free_at = 0.0

        async def deliver() -> None:
            loop = asyncio.get_running_loop()
            while True:
                due, chunk = await queue.get()
                if not chunk:
                    writer.close()
                    return
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                writer.write(chunk)
                await writer.drain()

        task = asyncio.ensure_future(deliver())
        loop = asyncio.get_running_loop()
        try:
            while True:
                chunk = await reader.read(65536)
                now = loop.time()
                free_at = max(free_at, now) + len(chunk) / RATE
                await queue.put((free_at + ONE_WAY, chunk))
                if not chunk:
                    break
            await task
        except (ConnectionError, asyncio.CancelledError):
            task.cancel()

    async def handle(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_r, server_w = await asyncio.open_connection("127.0.0.1", upstream_port)
        await asyncio.gather(
            pipe(client_r, server_w), pipe(server_r, client_w), return_exceptions=True
        )

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        print(server.sockets[0].getsockname()[1], flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


# --------------------------------------------------------------------------- one client run


def _client(url: str, scenario: str, gzip: bool, pods: int) -> None:
    import anyio

    from kcm.client import ApiClient, ClientConfig
    from kcm.informers import SharedIndexInformer, SharedInformerFactory, strip_managed_fields
    from kcm.models import PartialObjectMetadata, resource_info_for
    from kcm.models.core_v1 import Pod

    async def main() -> None:
        config = ClientConfig(server=url, qps=-1, disable_compression=not gzip)
        async with ApiClient(config) as client:
            informer: SharedIndexInformer[Any]
            if scenario == "full":
                informer = SharedIndexInformer(client.api(Pod, NAMESPACE))
            elif scenario == "gc-before":
                api: Any = client.api(
                    PartialObjectMetadata, NAMESPACE, resource=resource_info_for(Pod)
                )
                api._list_headers = api._get_headers = None  # whole objects, skimmed here
                api._watch_headers = {"Accept-Encoding": "identity"}
                informer = SharedIndexInformer(api, transform=strip_managed_fields)
            else:
                factory = SharedInformerFactory(client, namespace=NAMESPACE)
                transform = strip_managed_fields if scenario == "gc-after" else None
                informer = factory.metadata_informer(Pod, transform=transform)
            base = settled_rss()
            peak_base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
            registration = informer.add_event_handler(on_add=lambda obj: None)
            cpu0, t0 = time.process_time(), time.perf_counter()
            async with anyio.create_task_group() as tg:
                tg.start_soon(informer.run)
                await registration.wait_synced()
                wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
                tg.cancel_scope.cancel()
            cached = len(informer.indexer.keys())
            assert cached == pods, f"cached {cached} of {pods}"
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
            held = settled_rss() - base
            print(
                json.dumps(
                    {
                        "wall_s": wall,
                        "client_cpu_s": cpu,
                        "objects_per_s": pods / wall,
                        "kb_per_object": held / pods / 1024,
                        "peak_growth_mb": max(0, peak - max(peak_base, base)) / 2**20,
                    }
                ),
                flush=True,
            )
            del informer

    anyio.run(main)


# --------------------------------------------------------------------------- orchestration


def _start(args: list[str]) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([sys.executable, __file__, *args], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line:
        raise RuntimeError(f"{args[0]} failed to start")
    return proc, int(line)


def _cpu_of(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def _bytes_sent(port: int) -> int:
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats") as response:
        return int(json.load(response)["bytes"])


def _run(
    server: subprocess.Popen[str],
    server_port: int,
    port: int,
    key: tuple[str, bool, str],
    pods: int,
) -> dict[str, Any]:
    scenario, gzip, _link_name = key
    cpu0, sent0 = _cpu_of(server.pid), _bytes_sent(server_port)
    url = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, __file__, "client", url, scenario, "1" if gzip else "0", str(pods)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    rows = [json.loads(x) for x in out.stdout.splitlines() if x.startswith("{")]
    if not rows:
        raise RuntimeError(out.stderr[-2000:])
    row: dict[str, Any] = rows[-1]
    row["server_cpu_s"] = _cpu_of(server.pid) - cpu0
    row["wire_mb"] = (_bytes_sent(server_port) - sent0) / 2**20
    return row


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def _table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| scenario | gzip | link | objects/s | wall s | client CPU s | server CPU s | "
        "on the wire MB | KB per object | peak growth MB |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        lines.append(
            f"| {r['scenario']} | {'yes' if r['gzip'] else 'no'} | {r['link']} | "
            f"{r['objects_per_s']:,.0f} | {r['wall_s']:.2f} | {r['client_cpu_s']:.2f} | "
            f"{r['server_cpu_s']:.2f} | {r['wire_mb']:.1f} | {r['kb_per_object']:.2f} | "
            f"{r['peak_growth_mb']:.0f} |"
        )
    return "\n".join(lines)


def _plot(results: list[dict[str, Any]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16, 5))
    lists = [r for r in results if r["scenario"] in ("full", "metadata")]
    labels = [f"{r['scenario']}, {r['link']}, {'gzip' if r['gzip'] else 'plain'}" for r in lists]
    axes[0].barh(labels, [r["objects_per_s"] for r in lists], color="tab:blue")
    axes[0].set_title("LIST to synced informer, objects/s", fontsize=10)
    axes[0].invert_yaxis()
    axes[1].barh(labels, [r["wire_mb"] for r in lists], color="tab:orange")
    axes[1].set_title("bytes on the wire, MB", fontsize=10)
    axes[1].invert_yaxis()
    axes[1].set_yticklabels([])
    memory = [r for r in results if r["link"] == "loopback" and not r["gzip"]]
    memory += [r for r in results if r["scenario"].startswith("gc-")]
    axes[2].barh(
        [r["scenario"] for r in memory], [r["kb_per_object"] for r in memory], color="tab:green"
    )
    axes[2].set_title("memory per cached object, KB (loopback)", fontsize=10)
    axes[2].invert_yaxis()
    pods = results[0]["pods"]
    fig.suptitle(
        f"Metadata-only informers and gzip ({pods:,} pods of ~4.5 KB; remote: 100 Mbit/s, "
        "10 ms RTT)"
    )
    fig.tight_layout()
    PLOT.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(PLOT, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pods", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="2,000 pods, one repeat")
    parser.add_argument("--plot-only", action="store_true", help="re-plot the saved results")
    args = parser.parse_args()
    if args.plot_only:
        _plot(json.loads(RESULTS.read_text())["results"])
        return
    pods, repeats = (2_000, 1) if args.quick else (args.pods, args.repeats)
    server, server_port = _start(["serve", str(pods)])
    link, link_port = _start(["link", str(server_port)])
    keys = [
        (scenario, gzip, link_name)
        for link_name in ("loopback", "remote")
        for scenario in ("full", "metadata")
        for gzip in (False, True)
    ]
    keys += [("gc-before", True, "loopback"), ("gc-after", True, "loopback")]
    runs: dict[tuple[str, bool, str], list[dict[str, Any]]] = {k: [] for k in keys}
    try:
        for repeat in range(repeats):
            for key in keys:
                port = server_port if key[2] == "loopback" else link_port
                runs[key].append(_run(server, server_port, port, key, pods))
                print(f"[{repeat + 1}/{repeats}] {key}: {runs[key][-1]}", file=sys.stderr)
    finally:
        for proc in (link, server):
            proc.kill()
            proc.wait()
    results = [
        {"scenario": s, "gzip": g, "link": lk, "pods": pods, **_median(runs[(s, g, lk)])}
        for s, g, lk in keys
    ]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "pods": pods,
        "repeats": repeats,
        "python": sys.version.split()[0],
        "load_average": os.getloadavg(),
        "remote_link": {"mbit_per_s": RATE * 8 / 1e6, "rtt_ms": ONE_WAY * 2000},
    }
    RESULTS.write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
    print(_table(results))
    try:
        _plot(results)
    except ImportError:
        print("matplotlib is not installed: no plot", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "serve":
        _serve(int(sys.argv[2]))
    elif len(sys.argv) > 1 and sys.argv[1] == "link":
        _link(int(sys.argv[2]))
    elif len(sys.argv) > 1 and sys.argv[1] == "client":
        _client(sys.argv[2], sys.argv[3], sys.argv[4] == "1", int(sys.argv[5]))
    else:
        main()
