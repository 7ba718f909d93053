"""Benchmark of the embedded API server: creates/s, updates/s, gets/s, watch events/s to N
watchers.

Usage: python benchmarks/apiserver.py [--quick]

Everything runs in one process on asyncio: the server and an httpx client sharing one core,
which is how tests use it. Requests go over HTTP (8 concurrent requests, kept-alive
connections), twice: plain HTTP without authentication (the test fixture's mode) and HTTPS
with the administrator's client certificate (the secure default of ``kcm`` and ``kcm
apiserver``). Watch fan-out writes go straight into the server's store so the figure measures
delivery, not request parsing.
"""

from __future__ import annotations

import argparse
import json
import ssl
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import httpx

from kcm.apiserver import ApiServer

ROOT = Path(__file__).resolve().parent.parent
CM = "/api/v1/namespaces/default/configmaps"


def _client(server: ApiServer, directory: Path) -> httpx.AsyncClient:
    """A client of ``server``: plain, or trusting its CA with the administrator's certificate."""
    if not server.tls:
        return httpx.AsyncClient(base_url=server.url, timeout=30)
    assert server.ca_pem is not None
    pair = server.admin_certificate()
    (directory / "admin.crt").write_bytes(pair.cert_pem)
    (directory / "admin.key").write_bytes(pair.key_pem)
    context = ssl.create_default_context(cadata=server.ca_pem.decode())
    context.load_cert_chain(directory / "admin.crt", directory / "admin.key")
    return httpx.AsyncClient(base_url=server.url, timeout=30, verify=context)


async def _requests(
    server: ApiServer, count: int, concurrency: int = 8
) -> dict[str, tuple[float, float]]:
    """Creates, then merge-patch updates, then gets of ``count`` ConfigMaps."""
    with tempfile.TemporaryDirectory() as directory:
        http = _client(server, Path(directory))
    async with http:
        names = [f"bench-{i}" for i in range(count)]

        async def worker(chunk: list[str], verb: str) -> None:
            for name in chunk:
                if verb == "updates":
                    r = await http.patch(
                        f"{CM}/{name}",
                        json={"data": {"v": "2"}},
                        headers={"content-type": "application/merge-patch+json"},
                    )
                elif verb == "gets":
                    r = await http.get(f"{CM}/{name}")
                else:
                    r = await http.post(CM, json={"metadata": {"name": name}, "data": {"v": "1"}})
                r.raise_for_status()

        rates = {}
        for verb in ("creates", "updates", "gets"):
            start, cpu = time.perf_counter(), time.process_time()
            async with anyio.create_task_group() as tg:
                for i in range(concurrency):
                    tg.start_soon(worker, names[i::concurrency], verb)
            wall = time.perf_counter() - start
            rates[verb] = (count / wall, count / (time.process_time() - cpu))
        return rates


async def _fanout(watchers: int, events: int) -> tuple[float, float]:
    async with ApiServer(watch_buffer=events + 10) as server:
        res = server.registry.lookup("", "v1", "configmaps")
        assert res is not None
        limits = httpx.Limits(max_connections=watchers + 5)
        async with httpx.AsyncClient(base_url=server.url, timeout=60, limits=limits) as http:
            received = [0] * watchers
            done = anyio.Event()
            remaining = [watchers]

            async def watch(i: int) -> None:
                params = {"watch": "1", "resourceVersion": str(server.store.rv)}
                async with http.stream("GET", CM, params=params) as resp:
                    async for chunk in resp.aiter_raw():
                        received[i] += chunk.count(b"\n")
                        if received[i] >= events:
                            break
                remaining[0] -= 1
                if remaining[0] == 0:
                    done.set()

            async with anyio.create_task_group() as tg:
                for i in range(watchers):
                    tg.start_soon(watch, i)
                await server.wait_for_watches(watchers)
                start, cpu = time.perf_counter(), time.process_time()
                for n in range(events):
                    server.rest.create(res, "default", {"metadata": {"name": f"w{n}"}}, {})
                    if n % 50 == 0:
                        await (
                            anyio.lowlevel.checkpoint()
                        )  # let the responses drain, as real writers would
                with anyio.fail_after(300):
                    await done.wait()
                elapsed = time.perf_counter() - start
                cpu = time.process_time() - cpu
                tg.cancel_scope.cancel()
    return watchers * events / elapsed, watchers * events / cpu


async def main(quick: bool) -> dict[str, Any]:
    count = 1000 if quick else 5000
    async with ApiServer() as server:
        plain = await _requests(server, count)
    async with ApiServer(tls=True) as server:
        secure = await _requests(server, count)
    fan: dict[str, tuple[float, float]] = {}
    for n in (1, 10, 100):
        events = (300 if quick else 2000) if n < 100 else (100 if quick else 500)
        fan[str(n)] = await _fanout(n, events)
    return {
        "creates_per_s": plain["creates"],
        "updates_per_s": plain["updates"],
        "gets_per_s": plain["gets"],
        "tls_client_cert": {f"{verb}_per_s": rate for verb, rate in secure.items()},
        "watch_events_per_s": fan,
        "quick": quick,
        "objects": count,
        "note": "each value is [per wall-clock second, per CPU second of this process]",
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="short run")
    args = parser.parse_args()
    result = anyio.run(main, args.quick)
    print(f"{'metric':<36}{'per wall s':>12}{'per CPU s':>12}")
    rows = [("creates (HTTP, 8 concurrent)", "creates_per_s")]
    rows.append(("updates (merge patch, 8 conc.)", "updates_per_s"))
    rows.append(("gets (8 concurrent)", "gets_per_s"))
    for label, key in rows:
        wall, cpu = result[key]
        print(f"{label:<36}{wall:>12.0f}{cpu:>12.0f}")
        wall, cpu = result["tls_client_cert"][key]
        print(f"{'  ... HTTPS + client certificate':<36}{wall:>12.0f}{cpu:>12.0f}")
    for n, (wall, cpu) in result["watch_events_per_s"].items():
        print(f"{'watch events to ' + n + ' watchers':<36}{wall:>12.0f}{cpu:>12.0f}")
    out = ROOT / "benchmarks" / "results" / "apiserver.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
    ax1.bar(["creates/s", "updates/s"], [result["creates_per_s"][0], result["updates_per_s"][0]])
    ax1.set_title("writes over HTTP")
    names = list(result["watch_events_per_s"])
    ax2.bar([f"{n} watchers" for n in names], [result["watch_events_per_s"][n][0] for n in names])
    ax2.set_title("watch events delivered / s")
    fig.tight_layout()
    png = ROOT / "docs" / "benchmarks" / "apiserver.png"
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=100)
    print(f"wrote {out.relative_to(ROOT)} and {png.relative_to(ROOT)}")
