"""``kcm bench --peers``: the same measurement with other Python clients, each in its own process.

``python -m kcm.cli._bench_peers PEER KUBECONFIG NAMESPACE RESOURCE RV UPDATES`` lists the
namespace's objects in pages of 500 into a dict keyed by namespace/name (what a user of that
library would write), then watches from ``RV`` (kcm's list, taken before the updates) into the
same dict until ``UPDATES`` events have arrived, and prints one JSON line with the figures. The
parent (:func:`run_peer`) starts it and reads that line.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from typing import Any

__all__ = ["PEERS", "installed_peers", "run_peer"]

PEERS = {"lightkube": "lightkube", "kubernetes": "kubernetes (official)"}
"""Peer name (its import name) -> label."""


def installed_peers() -> list[str]:
    """The peers importable in this Python."""
    return [name for name in PEERS if importlib.util.find_spec(name) is not None]


def run_peer(
    name: str,
    *,
    kubeconfig: str,
    namespace: str,
    resource: str,
    resource_version: str,
    updates: int,
    timeout: float,
) -> dict[str, Any]:
    """Run one peer in a fresh interpreter; its figures, or ``{"error": ...}``."""
    cmd = [
        sys.executable,
        "-m",
        "kcm.cli._bench_peers",
        name,
        kubeconfig,
        namespace,
        resource,
        resource_version,
        str(updates),
    ]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:g}s"}
    for line in reversed(out.stdout.splitlines()):
        if line.startswith("{"):
            result: dict[str, Any] = json.loads(line)
            return result
    tail = " | ".join((out.stderr or out.stdout).strip().splitlines()[-2:])
    return {"error": tail or f"exit status {out.returncode}"}


class _Clock:
    def __init__(self) -> None:
        self.wall = time.perf_counter()
        self.cpu = time.process_time()

    def since(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall, time.process_time() - self.cpu


def _lightkube(kubeconfig: str, ns: str, resource: str, rv: str, updates: int) -> dict[str, Any]:
    import anyio

    from ._bench_informer import settled_rss

    lightkube: Any = importlib.import_module("lightkube")  # optional; not type-checked
    core: Any = importlib.import_module("lightkube.resources.core_v1")
    res = {"pods": core.Pod, "configmaps": core.ConfigMap}[resource]

    async def main() -> dict[str, Any]:
        config = lightkube.KubeConfig.from_file(kubeconfig)
        client = lightkube.AsyncClient(config=config, namespace=ns)
        cache: dict[tuple[str, str], Any] = {}
        base = settled_rss()
        clock = _Clock()
        async for obj in client.list(res, namespace=ns, chunk_size=500):
            cache[(obj.metadata.namespace, obj.metadata.name)] = obj
        list_s, list_cpu = clock.since()
        per_object = max(0.0, (settled_rss() - base) / max(len(cache), 1))
        clock, seen = _Clock(), 0
        if updates:
            async for _type, obj in client.watch(res, namespace=ns, resource_version=rv):
                cache[(obj.metadata.namespace, obj.metadata.name)] = obj
                seen += 1
                if seen >= updates:
                    break
        watch_s, watch_cpu = clock.since()
        return _figures(len(cache), seen, list_s, list_cpu, watch_s, watch_cpu, per_object)

    result: dict[str, Any] = anyio.run(main)  # lightkube runs on asyncio, anyio's default
    return result


def _kubernetes(kubeconfig: str, ns: str, resource: str, rv: str, updates: int) -> dict[str, Any]:
    from ._bench_informer import settled_rss

    kubernetes: Any = importlib.import_module("kubernetes")  # optional; not type-checked
    v1 = kubernetes.client.CoreV1Api(kubernetes.config.new_client_from_config(kubeconfig))
    lister = {"pods": v1.list_namespaced_pod, "configmaps": v1.list_namespaced_config_map}[resource]
    cache: dict[tuple[str, str], Any] = {}
    base = settled_rss()
    clock = _Clock()
    cont, page = None, None
    while True:
        page = lister(ns, limit=500, _continue=cont)
        for obj in page.items:
            cache[(obj.metadata.namespace, obj.metadata.name)] = obj
        cont = page.metadata._continue
        if not cont:
            break
    del page
    list_s, list_cpu = clock.since()
    per_object = max(0.0, (settled_rss() - base) / max(len(cache), 1))
    clock, seen = _Clock(), 0
    if updates:
        for event in kubernetes.watch.Watch().stream(lister, ns, resource_version=rv):
            obj = event["object"]
            cache[(obj.metadata.namespace, obj.metadata.name)] = obj
            seen += 1
            if seen >= updates:
                break
    watch_s, watch_cpu = clock.since()
    return _figures(len(cache), seen, list_s, list_cpu, watch_s, watch_cpu, per_object)


def _figures(
    objects: int,
    events: int,
    list_s: float,
    list_cpu: float,
    watch_s: float,
    watch_cpu: float,
    per_object: float,
) -> dict[str, Any]:
    return {
        "objects": objects,
        "events": events,
        "list_seconds": list_s,
        "list_cpu_seconds": list_cpu,
        "watch_seconds": watch_s,
        "watch_cpu_seconds": watch_cpu,
        "bytes_per_object": per_object,
    }


def main(argv: list[str]) -> int:
    name, kubeconfig, ns, resource, rv, updates = argv
    runner = {"lightkube": _lightkube, "kubernetes": _kubernetes}[name]
    print(json.dumps(runner(kubeconfig, ns, resource, rv, int(updates))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
