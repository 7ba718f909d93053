"""Garbage collector: the cost of the ownership graph, and cascades on the embedded server.

Two parts:

* **graph** (synchronous, no I/O): ``Graph.observe`` for 50,000 objects (5,000 owners with 10
  dependents each, dependents first so every owner starts as a virtual node), then
  ``Graph.forget`` of every owner and every dependent. Reported as microseconds per event:
  the work an informer event costs the collector.
* **cascade** (asyncio, embedded API server in the same process, client rate limit off): one
  owner ConfigMap with N dependent ConfigMaps; the time from the owner's DELETE until every
  dependent is gone, with ``Background`` and with ``Foreground`` propagation (until the owner
  itself is gone). 20 workers, as kube's default.

Run: ``python benchmarks/gc_cascade.py [--quick]``. Prints a table, writes
benchmarks/results/gc_cascade.json and docs/benchmarks/gc_cascade.png.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import msgspec

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.garbagecollector import GarbageCollectorController, Graph
from kcm.informers import SharedInformerFactory
from kcm.models.core_v1 import ConfigMap
from kcm.models.meta_v1 import ObjectMeta, OwnerReference
from kcm.testing import FakeRecorder, client_config_for

ROOT = Path(__file__).resolve().parents[1]


def bench_graph(owners: int, per_owner: int) -> dict[str, float]:
    queued: list[str] = []
    graph = Graph(
        attempt_to_delete=queued.append,
        attempt_to_delete_later=queued.append,
        attempt_to_orphan=queued.append,
        invalid_namespace=lambda node, ref: None,
    )
    deps = []
    owner_metas = []
    for o in range(owners):
        uid = f"owner-{o}"
        owner_metas.append(ObjectMeta(name=f"o{o}", namespace="ns", uid=uid))
        ref = OwnerReference(api_version="v1", kind="ConfigMap", name=f"o{o}", uid=uid)
        for d in range(per_owner):
            deps.append(
                ObjectMeta(
                    name=f"d{o}-{d}", namespace="ns", uid=f"d{o}-{d}", owner_references=[ref]
                )
            )
    start = time.perf_counter()
    for meta in deps:
        graph.observe("v1", "ConfigMap", meta)
    for meta in owner_metas:
        graph.observe("v1", "ConfigMap", meta)
    added = time.perf_counter() - start
    start = time.perf_counter()
    for meta in owner_metas:
        graph.forget("v1", "ConfigMap", meta)
    for meta in deps:
        graph.forget("v1", "ConfigMap", meta)
    removed = time.perf_counter() - start
    events = len(deps) + len(owner_metas)
    return {
        "objects": events,
        "observe_us_per_event": added / events * 1e6,
        "forget_us_per_event": removed / events * 1e6,
        "queued": len(queued),
    }


async def _cascade(n: int, policy: str) -> float:
    async with ApiServer() as server:
        config = msgspec.structs.replace(client_config_for(server), qps=-1)
        async with ApiClient(config) as client, anyio.create_task_group() as tg:
            factory = SharedInformerFactory(client)
            gc = GarbageCollectorController(client, factory, recorder=FakeRecorder(), workers=20)
            await tg.start(factory.run)
            await tg.start(gc.run)
            cms = client.api(ConfigMap, "default")
            owner = await cms.create(ConfigMap(metadata=ObjectMeta(name="owner")))
            ref = OwnerReference(
                api_version="v1",
                kind="ConfigMap",
                name="owner",
                uid=owner.metadata.uid,
                block_owner_deletion=True,
            )
            limiter = anyio.CapacityLimiter(32)

            uids = [owner.metadata.uid or ""]

            async def create(i: int) -> None:
                async with limiter:
                    dep = await cms.create(
                        ConfigMap(
                            metadata=ObjectMeta(
                                name=f"d{i}", labels={"bench": "1"}, owner_references=[ref]
                            )
                        )
                    )
                    uids.append(dep.metadata.uid or "")

            async with anyio.create_task_group() as creators:
                for i in range(n):
                    creators.start_soon(create, i)
            while not all(gc.graph.get(u) for u in uids):  # noqa: ASYNC110 - monitors
                await anyio.sleep(0.01)
            start = time.perf_counter()
            await cms.delete("owner", propagation_policy=policy)
            # the collector's monitors see every deletion; polling the graph costs nothing
            while any(gc.graph.get(u) for u in uids):  # noqa: ASYNC110
                await anyio.sleep(0.005)
            elapsed = time.perf_counter() - start
            tg.cancel_scope.cancel()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller graph and cascades")
    args = parser.parse_args()
    owners = 1000 if args.quick else 5000
    sizes = [100, 500] if args.quick else [100, 500, 2000]
    graph = bench_graph(owners, 10)
    print(
        f"graph: {graph['objects']} objects, observe {graph['observe_us_per_event']:.1f} us/event, "
        f"forget {graph['forget_us_per_event']:.1f} us/event"
    )
    rows: list[dict[str, Any]] = []
    print(f"{'dependents':>10} {'policy':>11} {'seconds':>8} {'deletes/s':>10}")
    for n in sizes:
        for policy in ("Background", "Foreground"):
            seconds = anyio.run(_cascade, n, policy)
            rows.append({"dependents": n, "policy": policy, "seconds": seconds})
            print(f"{n:>10} {policy:>11} {seconds:>8.2f} {n / seconds:>10.0f}")
    result = {
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "quick": args.quick,
        "graph": graph,
        "cascade": rows,
    }
    out = ROOT / "benchmarks" / "results" / "gc_cascade.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    plot(rows, ROOT / "docs" / "benchmarks" / "gc_cascade.png")


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for policy in ("Background", "Foreground"):
        points = [(r["dependents"], r["seconds"]) for r in rows if r["policy"] == policy]
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=policy)
    ax.set_xlabel("dependents of one owner")
    ax.set_ylabel("seconds until all are gone")
    ax.set_title("Cascading deletion on the embedded API server")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


if __name__ == "__main__":
    main()
