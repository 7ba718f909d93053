"""Informer throughput: LIST-sync objects/s, WATCH events/s and memory per cached pod.

Run ``python benchmarks/informer_throughput.py`` (20,000 and 100,000 pods) or ``--quick``
(2,000 and 5,000). For each size a stub API server (``benchmarks/_stub_server.py``, its own
process, everything pre-encoded) serves a LIST of realistic ~5 KB pods with managedFields
(``benchmarks/_corpus.py``) in pages of 500 and a WATCH stream of MODIFIED events, then end of
stream. ``--modes flush`` (the default) has the stub write and drain one event at a time, as
kube-apiserver flushes after every event; ``--modes burst`` writes the whole stream at once
(clients then read many events per socket read, which flatters a high per-read cost);
``--modes flush,burst`` runs both. ``--repeat N`` runs every contender N times, alternating
contenders, and reports the median run (by watch rate).

Every contender runs in a fresh subprocess and does what a user of that library would write:
LIST into a cache keyed by namespace/name, then WATCH from the list's resourceVersion into the
same cache, counting events in a handler. Measured:

- list-sync objects/s: start of the informer (or first list call) until the cache is synced
  (kcm: ``tg.start(informer.run)`` returned, i.e. ``has_synced``);
- watch events/s: from sync until the handler has seen every MODIFIED event (for kcm this
  includes the handler draining the initial adds, which overlaps the watch);
- memory per cached pod: RSS after the run (``gc.collect()`` + ``malloc_trim``) minus RSS
  before the first request, divided by the number of pods;
- CPU seconds of the client process (``time.process_time``) for the list and for the watch,
  next to the wall-clock rates: on a shared machine they say what the client itself spent.

The model-based peers (official client, kubernetes_asyncio, lightkube) are slow: they sync at
most ``--peer-max`` pods and ``--peer-events`` events (rates are per object; memory per pod is
measured at that size). Results: a table on stdout, benchmarks/results/informer_throughput.json,
docs/benchmarks/informer_throughput.png.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import AsyncIterable, Callable
from pathlib import Path
from typing import Any

from _memory import settled_rss  # benchmarks/ (the script's directory)

ROOT = Path(__file__).resolve().parents[1]
# `python benchmarks/x.py` puts benchmarks/ first on sys.path, where benchmarks/requests.py
# shadows the `requests` package the official client imports; drop it.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]

RESULTS = ROOT / "benchmarks" / "results" / "informer_throughput.json"
PLOT = ROOT / "docs" / "benchmarks" / "informer_throughput.png"
LIST_RV = 1_000_000

# name -> (label, capped by --peer-max)
CONTENDERS: dict[str, tuple[str, bool]] = {
    "floor": ("raw msgspec decode (floor, no HTTP/cache)", False),
    "kcm": ("kcm SharedIndexInformer (defaults)", False),
    "kcm-strip": ("kcm + strip_managed_fields", False),
    "kcm-compact": ("kcm + compact (strip + share parts)", False),
    "kcm-freeze": ("kcm factory, freeze_gc_after_sync", False),
    "kcm-strip-freeze": ("kcm + strip + freeze_gc_after_sync", False),
    "kr8s": ("kr8s (get + watch)", True),
    "lightkube": ("lightkube AsyncClient (list + watch)", False),  # msgspec since 1.0: fast
    "kubernetes_asyncio": ("kubernetes_asyncio (list + Watch)", True),
    "kubernetes": ("kubernetes 37 SharedInformer", True),
    "client-go": ("client-go 1.24 SharedIndexInformer (Go)", False),
}
CLIENT_GO = ROOT / "benchmarks" / "clientgo" / "informerbench"  # benchmarks/clientgo/build.sh


# ----------------------------------------------------------------------------- measuring


class Result:
    def __init__(self, pods: int, events: int) -> None:
        self.pods = pods
        self.events = events
        self.base = settled_rss()
        self.t0 = self.t_sync = self.t_end = 0.0
        self.c0 = self.c_sync = self.c_end = 0.0

    def start(self) -> None:
        self.t0, self.c0 = time.perf_counter(), time.process_time()

    def synced(self) -> None:
        self.t_sync, self.c_sync = time.perf_counter(), time.process_time()

    def watched(self) -> None:
        self.t_end, self.c_end = time.perf_counter(), time.process_time()

    def emit(self, cached: int) -> None:
        assert cached == self.pods, f"cache holds {cached} objects, expected {self.pods}"
        mem = settled_rss() - self.base
        print(
            json.dumps(
                {
                    "pods": self.pods,
                    "events": self.events,
                    "list_s": self.t_sync - self.t0,
                    "watch_s": self.t_end - self.t_sync,
                    "objects_per_s": self.pods / (self.t_sync - self.t0),
                    "events_per_s": self.events / (self.t_end - self.t_sync),
                    "bytes_per_object": mem / self.pods,
                    "list_cpu_s": self.c_sync - self.c0,
                    "watch_cpu_s": self.c_end - self.c_sync,
                }
            ),
            flush=True,
        )


def _ns(pods: int, events: int) -> str:
    return f"bench-{pods}-{events}"


async def _watch_into(
    res: Result,
    cache: dict[tuple[str, str], Any],
    stream: AsyncIterable[tuple[Any, Any]],
    key: Callable[[Any], tuple[str, str]],
) -> None:
    """Cache the objects of the first ``res.events`` events of a client's ``(type, object)``
    watch stream under ``key(object)``, then stop the clock and report."""
    seen = 0
    async for _etype, obj in stream:
        cache[key(obj)] = obj
        seen += 1
        if seen == res.events:
            break
    res.watched()
    res.emit(len(cache))


# ----------------------------------------------------------------------------- contenders


def run_floor(url: str, pods: int, events: int) -> None:
    del url
    import importlib.util

    from kcm.models import WatchEvent, decoder
    from kcm.models.core_v1 import Pod, PodList

    spec = importlib.util.spec_from_file_location("_stub", ROOT / "benchmarks" / "_stub_server.py")
    assert spec is not None
    assert spec.loader is not None
    stub = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(stub)
    data = stub.Data(pods, events)
    pages = [data.page(pods, s, 500)[0] for s in range(0, pods, 500)]
    lines = bytes(data.stream).split(b"\r\n")[1::2]  # chunk payloads
    del data
    list_dec = decoder(PodList)
    ev_dec = decoder(WatchEvent[Pod])
    res = Result(pods, events)
    cache: dict[tuple[str, str], Pod] = {}
    res.start()
    for body in pages:
        for pod in list_dec.decode(body).items:
            cache[(pod.metadata.namespace or "", pod.metadata.name or "")] = pod
    res.synced()
    for line in lines:
        obj = ev_dec.decode(line).object
        cache[(obj.metadata.namespace or "", obj.metadata.name or "")] = obj
    res.watched()
    res.emit(len(cache))  # pages and lines stay alive: they are in the baseline too


def run_kcm(
    url: str, pods: int, events: int, *, strip: bool, freeze: bool, share: bool = False
) -> None:
    import anyio

    from kcm.client import ApiClient, ClientConfig
    from kcm.informers import (
        SharedIndexInformer,
        SharedInformerFactory,
        compact,
        strip_managed_fields,
    )
    from kcm.models.core_v1 import Pod

    async def main() -> None:
        ns = _ns(pods, events)
        # qps=-1: no client-side throttle (the default 20 qps would make a 100k list of 500-pod
        # pages take 10 s of sleeping; the peers have no client-side limiter).
        async with ApiClient(ClientConfig(server=url, qps=-1)) as client:
            res = Result(pods, events)
            transform = compact if share else strip_managed_fields if strip else None
            factory = None
            if freeze:
                factory = SharedInformerFactory(
                    client, transform=transform, freeze_gc_after_sync=True
                )
                informer = factory.informer_for(Pod, namespace=ns)
            else:
                informer = SharedIndexInformer(client.api(Pod, ns), transform=transform)
            updates = 0
            done = anyio.Event()

            def on_update(old: Pod, new: Pod) -> None:
                nonlocal updates
                updates += 1
                if updates == events:
                    done.set()

            reg = informer.add_event_handler(on_add=lambda pod: None, on_update=on_update)
            async with anyio.create_task_group() as tg:
                res.start()
                await tg.start(factory.run if factory is not None else informer.run)
                # Cache synced: the watch starts now, so the watch clock starts too (the
                # handler drains the initial adds concurrently; its time counts as watch time).
                res.synced()
                await reg.wait_synced()
                await done.wait()
                res.watched()
                tg.cancel_scope.cancel()
            res.emit(len(informer.indexer.keys()))

    anyio.run(main)


def run_kubernetes(url: str, pods: int, events: int) -> None:
    import threading

    from kubernetes import client as kc
    from kubernetes.informer import ADDED, MODIFIED, SharedInformer

    cfg = kc.Configuration()
    cfg.host = url
    v1 = kc.CoreV1Api(kc.ApiClient(cfg))
    res = Result(pods, events)
    informer = SharedInformer(v1.list_namespaced_pod, namespace=_ns(pods, events))
    counts = {"add": 0, "mod": 0}
    synced, done = threading.Event(), threading.Event()

    def on_add(obj: Any) -> None:
        counts["add"] += 1
        if counts["add"] == pods:
            res.synced()
            synced.set()

    def on_mod(obj: Any) -> None:
        counts["mod"] += 1
        if counts["mod"] == events:
            res.watched()
            done.set()

    informer.add_event_handler(ADDED, on_add)
    informer.add_event_handler(MODIFIED, on_mod)
    res.start()
    informer.start()
    synced.wait()
    done.wait()
    res.emit(len(informer.cache.list_keys()))
    os._exit(0)  # the informer thread is blocked in a held-open watch


def run_kubernetes_asyncio(url: str, pods: int, events: int) -> None:
    import asyncio

    from kubernetes_asyncio import client as kc
    from kubernetes_asyncio import watch

    async def main() -> None:
        ns = _ns(pods, events)
        cfg = kc.Configuration(host=url)
        async with kc.ApiClient(cfg) as api_client:
            v1 = kc.CoreV1Api(api_client)
            res = Result(pods, events)
            cache: dict[tuple[str, str], Any] = {}
            res.start()
            cont = None
            while True:
                resp = await v1.list_namespaced_pod(ns, limit=500, _continue=cont)
                for p in resp.items:
                    cache[(p.metadata.namespace, p.metadata.name)] = p
                cont = resp.metadata._continue
                if not cont:
                    break
            rv = resp.metadata.resource_version
            del resp
            res.synced()
            seen = 0
            w = watch.Watch()
            async for ev in w.stream(v1.list_namespaced_pod, ns, resource_version=rv):
                obj = ev["object"]
                cache[(obj.metadata.namespace, obj.metadata.name)] = obj
                seen += 1
                if seen == events:
                    break
            res.watched()
            w.stop()
            res.emit(len(cache))

    asyncio.run(main())


def run_kr8s(url: str, pods: int, events: int) -> None:
    import asyncio

    import kr8s.asyncio

    async def main() -> None:
        ns = _ns(pods, events)
        api = await kr8s.asyncio.api(url=url)
        res = Result(pods, events)
        cache: dict[tuple[str, str], Any] = {}
        res.start()
        async for pod in api.get("pods", namespace=ns):
            cache[(pod.namespace, pod.name)] = pod
        res.synced()
        # kr8s.get does not return the list's resourceVersion; a user would take it from a
        # raw list, here it is the stub's constant.
        stream = api.watch("pods", namespace=ns, since=str(LIST_RV))
        await _watch_into(res, cache, stream, lambda obj: (obj.namespace, obj.name))

    asyncio.run(main())
    os._exit(0)


def run_lightkube(url: str, pods: int, events: int) -> None:
    import asyncio

    from lightkube import AsyncClient
    from lightkube.config.kubeconfig import KubeConfig
    from lightkube.config.models import Cluster, User
    from lightkube.resources.core_v1 import Pod

    async def main() -> None:
        ns = _ns(pods, events)
        config = KubeConfig.from_one(cluster=Cluster(server=url), user=User(), namespace=ns)
        client = AsyncClient(config=config, namespace=ns)
        res = Result(pods, events)
        cache: dict[tuple[str, str], Any] = {}
        res.start()
        listing = client.list(Pod, namespace=ns, chunk_size=500)
        async for pod in listing:
            cache[(pod.metadata.namespace, pod.metadata.name)] = pod
        rv = listing.resourceVersion
        res.synced()
        stream = client.watch(Pod, namespace=ns, resource_version=rv)
        await _watch_into(
            res, cache, stream, lambda obj: (obj.metadata.namespace, obj.metadata.name)
        )

    asyncio.run(main())
    os._exit(0)


def run_client_go(url: str, pods: int, events: int) -> None:
    if not CLIENT_GO.exists():
        raise SystemExit(
            f"{CLIENT_GO.relative_to(ROOT)} is not built: run benchmarks/clientgo/build.sh"
        )
    args = [str(CLIENT_GO), f"-url={url}", f"-pods={pods}", f"-events={events}"]
    os.execv(args[0], args)


RUNNERS: dict[str, Callable[[str, int, int], None]] = {
    "floor": run_floor,
    "kcm": lambda u, p, e: run_kcm(u, p, e, strip=False, freeze=False),
    "kcm-strip": lambda u, p, e: run_kcm(u, p, e, strip=True, freeze=False),
    "kcm-compact": lambda u, p, e: run_kcm(u, p, e, strip=True, freeze=False, share=True),
    "kcm-freeze": lambda u, p, e: run_kcm(u, p, e, strip=False, freeze=True),
    "kcm-strip-freeze": lambda u, p, e: run_kcm(u, p, e, strip=True, freeze=True),
    "kr8s": run_kr8s,
    "lightkube": run_lightkube,
    "kubernetes_asyncio": run_kubernetes_asyncio,
    "kubernetes": run_kubernetes,
    "client-go": run_client_go,
}


# ----------------------------------------------------------------------------- driver


def _start_stub(pods: int, events: int, mode: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "_stub_server.py"),
            "--pods",
            str(pods),
            "--events",
            str(events),
            "--burst" if mode == "burst" else "--flush-per-event",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    port = proc.stdout.readline().strip()
    if not port:
        raise RuntimeError("stub server failed to start")
    return proc, f"http://127.0.0.1:{port}"


def _run_one(name: str, url: str, pods: int, events: int, timeout: float) -> dict[str, Any]:
    cmd = [
        sys.executable,
        __file__,
        "--contender",
        name,
        "--url",
        url,
        "--pods",
        str(pods),
        "--events",
        str(events),
    ]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    for line in reversed(out.stdout.splitlines()):
        if line.startswith("{"):
            result: dict[str, Any] = json.loads(line)
            return result
    tail = (out.stderr or out.stdout).strip().splitlines()[-3:]
    return {"error": " | ".join(tail) or f"exit {out.returncode}"}


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The median run by watch rate (a failed run sorts first); the run count alongside."""
    ok = sorted((r for r in runs if "error" not in r), key=lambda r: r["events_per_s"])
    chosen = ok[len(ok) // 2] if ok else runs[-1]
    return {**chosen, "runs": len(runs), "failed_runs": len(runs) - len(ok)}


def _table(rows: list[dict[str, Any]]) -> str:
    head = (
        f"{'contender':<40} {'mode':>5} {'pods':>7} {'list obj/s':>11} {'events':>7} "
        f"{'watch ev/s':>11} {'KB/pod':>7} {'cpu µs/obj':>10} {'cpu µs/ev':>9}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        if "error" in r:
            lines.append(f"{r['label']:<40} {r['mode']:>5} {r['size']:>7}  ERROR {r['error'][:80]}")
            continue
        lines.append(
            f"{r['label']:<40} {r['mode']:>5} {r['pods']:>7} {r['objects_per_s']:>11,.0f} "
            f"{r['events']:>7} {r['events_per_s']:>11,.0f} {r['bytes_per_object'] / 1024:>7.1f} "
            f"{r['list_cpu_s'] / r['pods'] * 1e6:>10.1f} "
            f"{r['watch_cpu_s'] / r['events'] * 1e6:>9.1f}"
        )
    return "\n".join(lines)


def _plot(sizes: list[int], modes: list[str], rows: list[dict[str, Any]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n in CONTENDERS if any(r["name"] == n and "error" not in r for r in rows)]
    fig, axes = plt.subplots(1, 3, figsize=(17, 6))
    series = [(m, size) for m in modes for size in sizes]
    width = 0.8 / len(series)
    metrics = [
        ("objects_per_s", "LIST sync, objects/s (log)", True),
        ("events_per_s", "WATCH, events/s delivered to handlers (log)", True),
        ("bytes_per_object", "memory per cached pod, KB", False),
    ]
    for ax, (key, title, log) in zip(axes, metrics, strict=True):
        for j, (mode, size) in enumerate(series):
            vals = []
            for n in names:
                r = next(
                    (
                        r
                        for r in rows
                        if r["name"] == n
                        and r["size"] == size
                        and r["mode"] == mode
                        and "error" not in r
                    ),
                    None,
                )
                v = r[key] if r else 0.0
                vals.append(v / 1024 if key == "bytes_per_object" else v)
            ax.barh(
                [i + j * width for i in range(len(names))],
                vals,
                height=width,
                label=f"{size:,} pods, {mode}",
            )
        ax.set_yticks([i + width * (len(series) - 1) / 2 for i in range(len(names))])
        ax.set_yticklabels(
            [f"{n} (capped)" if CONTENDERS[n][1] else n for n in names] if ax is axes[0] else []
        )
        ax.invert_yaxis()
        if log:
            ax.set_xscale("log")
        if key == "bytes_per_object":
            ax.axvline(15, color="red", ls="--", lw=1, label="goal, all fields (15 KB)")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=7)
    fig.suptitle("Informer throughput vs peers (stub API server, ~5 KB pods, median of runs)")
    fig.tight_layout()
    PLOT.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(PLOT, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2,000 and 5,000 pods")
    parser.add_argument("--sizes", type=str, default=None, help="comma-separated pod counts")
    parser.add_argument("--events", type=int, default=None, help="watch events per run")
    parser.add_argument("--peer-max", type=int, default=None, help="pod cap for slow peers")
    parser.add_argument("--peer-events", type=int, default=None, help="event cap, slow peers")
    parser.add_argument("--only", type=str, default=None, help="comma-separated contenders")
    parser.add_argument("--timeout", type=float, default=240.0, help="per contender run, s")
    parser.add_argument(
        "--modes", type=str, default="flush", help="stub watch writes: flush, burst or both"
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs per contender (median)")
    parser.add_argument("--contender", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--pods", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.contender:
        RUNNERS[args.contender](args.url, args.pods, args.events)
        return

    sizes = (
        [int(s) for s in args.sizes.split(",")]
        if args.sizes
        else ([2000, 5000] if args.quick else [20_000, 100_000])
    )
    events = args.events or (5000 if args.quick else 20_000)
    peer_max = args.peer_max or (2000 if args.quick else 10_000)
    peer_events = args.peer_events or (2000 if args.quick else 5000)
    names = args.only.split(",") if args.only else list(CONTENDERS)
    modes = args.modes.split(",")
    if not set(modes) <= {"flush", "burst"}:
        parser.error("--modes takes flush, burst or flush,burst")

    rows: list[dict[str, Any]] = []
    load_before = os.getloadavg()  # the machine is shared: state its load next to the figures
    started = time.perf_counter()
    for mode in modes:
        for size in sizes:
            stub, url = _start_stub(size, events, mode)
            try:
                runs: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
                for _ in range(args.repeat):  # contenders alternate within each round
                    for name in names:
                        label, capped = CONTENDERS[name]
                        pods = min(size, peer_max) if capped else size
                        evs = min(events, peer_events) if capped else events
                        result = _run_one(name, url, pods, evs, args.timeout)
                        row = {"name": name, "label": label, "mode": mode, "size": size, **result}
                        runs[name].append(row)
                        print(_table([row]).splitlines()[-1], flush=True)
                rows.extend(_median(r) for r in runs.values())
            finally:
                stub.terminate()
                stub.wait()
    elapsed = time.perf_counter() - started

    print()
    print(_table(rows))
    print(f"\ntotal {elapsed:.0f} s; load average before {load_before}, after {os.getloadavg()}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "benchmark": "informer_throughput",
                "quick": args.quick,
                "modes": modes,
                "repeat": args.repeat,
                "sizes": sizes,
                "events": events,
                "peer_max": peer_max,
                "peer_events": peer_events,
                "python": platform.python_version(),
                "machine": f"{platform.machine()}, {os.cpu_count()} cpus",
                "elapsed_s": round(elapsed, 1),
                "load_avg_1_5_15_before": [round(x, 2) for x in load_before],
                "load_avg_1_5_15_after": [round(x, 2) for x in os.getloadavg()],
                "rows": rows,
            },
            indent=2,
        )
        + "\n"
    )
    _plot(sizes, modes, rows)
    print(f"wrote {RESULTS.relative_to(ROOT)} and {PLOT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
