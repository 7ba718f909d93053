"""Deployment + ReplicaSet controllers: N Deployments of R replicas reconciled to steady state.

Everything runs in one process on the embedded API server: the server, kcm's
DeploymentController and ReplicaSetController (their default 5 workers each, one shared
informer factory), and a stand-in kubelet. The kubelet marks every new pod Running and Ready in
bulk, as soon as the pod informer shows it (one status PATCH per pod, 64 at a time), so the
Deployments can become Available. Deployments are spread over ``--namespaces`` namespaces
(the ReplicaSet controller lists a namespace's pods on each sync, as kube-controller-manager
does).

Steady state: every Deployment has observedGeneration = generation, updated = ready =
available = R, and Progressing ``NewReplicaSetAvailable``, and every ReplicaSet reports R
available pods.

Reported: wall time from the first create to steady state, the process's CPU time over the
same span (steadier than wall time on a shared machine), peak RSS of the process (server and
controllers together: ``ru_maxrss``), and API requests counted by the server, split into
what the script sent (Deployment creates, kubelet status patches) and what the controllers sent.

    python benchmarks/controllers_scale.py            # 1,000 Deployments x 10 replicas
    python benchmarks/controllers_scale.py --quick    # 50 Deployments
"""

from __future__ import annotations

import argparse
import logging
import resource
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import msgspec
from _deployments import bench_deployment
from _kubelet import StandInKubelet  # benchmarks/ (the script's directory)
from _results import pyplot, save_plot, write_results

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.deployment import DeploymentController
from kcm.controllers.replicaset import ReplicaSetController
from kcm.informers import SharedInformerFactory
from kcm.models.apps_v1 import Deployment, ReplicaSet
from kcm.models.core_v1 import Namespace, Pod
from kcm.models.meta_v1 import ObjectMeta
from kcm.testing import client_config_for

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "controllers_scale.json"
PLOT = ROOT / "docs" / "benchmarks" / "controllers_scale.png"


class _Recorder:
    """Counts events (the benchmark does not post them to the server)."""

    def __init__(self) -> None:
        self.count = 0

    def event(self, obj: Any, type: str, reason: str, message: str) -> None:
        self.count += 1


def _steady(d: Deployment, rs_available: dict[str, int], replicas: int) -> bool:
    s = d.status
    if s is None or (s.observed_generation or 0) < (d.metadata.generation or 0):
        return False
    if not (s.updated_replicas == s.ready_replicas == s.available_replicas == replicas):
        return False
    if s.replicas != replicas:
        return False
    return any(
        c.type == "Progressing" and c.reason == "NewReplicaSetAvailable" for c in s.conditions or ()
    )


async def run(deployments: int, replicas: int, namespaces: int, limit: float) -> dict[str, Any]:
    namespaces = max(1, min(namespaces, deployments))
    ns_names = [f"bench-{j}" for j in range(namespaces)]
    sent = {"creates": 0}
    timeline: list[tuple[float, int, int]] = []
    async with ApiServer() as server:
        config = msgspec.structs.replace(client_config_for(server), qps=-1)
        async with (
            ApiClient(config) as ctl_client,
            ApiClient(config) as script_client,
            anyio.create_task_group() as tg,
        ):
            for ns in ns_names:
                await script_client.api(Namespace).create(Namespace(metadata=ObjectMeta(name=ns)))
            factory = SharedInformerFactory(ctl_client)
            recorder = _Recorder()
            dc = DeploymentController(ctl_client, factory, recorder=recorder)
            rsc = ReplicaSetController(ctl_client, factory, recorder=recorder)
            pods = factory.informer_for(Pod)
            await tg.start(factory.run)
            await tg.start(dc.run)
            await tg.start(rsc.run)
            requests_before = server.app.requests

            kubelet = StandInKubelet(script_client)
            pods.add_event_handler(kubelet)
            tg.start_soon(kubelet.run)
            start = time.perf_counter()
            cpu_start = time.process_time()

            async def create(i: int) -> None:
                async with create_limiter:
                    ns = ns_names[i % namespaces]
                    sent["creates"] += 1
                    await script_client.api(Deployment, ns).create(
                        bench_deployment(i, ns, replicas)
                    )

            create_limiter = anyio.CapacityLimiter(32)
            async with anyio.create_task_group() as ctg:
                for i in range(deployments):
                    ctg.start_soon(create, i)
            created_at = time.perf_counter() - start

            d_lister = factory.lister_for(Deployment)
            rs_lister = factory.lister_for(ReplicaSet)
            with anyio.fail_after(limit):
                while True:
                    rs_available = {
                        f"{rs.metadata.namespace}/{rs.metadata.name}": (
                            rs.status.available_replicas or 0 if rs.status else 0
                        )
                        for rs in rs_lister.list()
                    }
                    done = sum(_steady(d, rs_available, replicas) for d in d_lister.list())
                    timeline.append((time.perf_counter() - start, done, kubelet.marked))
                    if done == deployments and kubelet.marked >= deployments * replicas:
                        break
                    await anyio.sleep(0.1)
            wall = time.perf_counter() - start
            cpu = time.process_time() - cpu_start
            total_requests = server.app.requests - requests_before
            n_rs = len(rs_lister.list())
            n_pods = len(factory.lister_for(Pod).list())
            tg.cancel_scope.cancel()
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    controller_requests = total_requests - sent["creates"] - kubelet.patches_sent
    objects = deployments + n_rs + n_pods
    return {
        "deployments": deployments,
        "replicas": replicas,
        "namespaces": namespaces,
        "replica_sets": n_rs,
        "pods": n_pods,
        "wall_seconds": round(wall, 2),
        "cpu_seconds": round(cpu, 2),
        "creates_done_seconds": round(created_at, 2),
        "peak_rss_mib": round(peak_kb / 1024, 1),
        "requests_total": total_requests,
        "requests_script_creates": sent["creates"],
        "requests_kubelet": kubelet.patches_sent,
        "requests_controllers": controller_requests,
        "controller_requests_per_deployment": round(controller_requests / deployments, 2),
        "controller_requests_per_object": round(controller_requests / objects, 3),
        "requests_per_object": round(total_requests / objects, 3),
        "events_recorded": recorder.count,
        "timeline": [[round(t, 2), d, p] for t, d, p in timeline],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50 Deployments")
    parser.add_argument("--deployments", type=int, default=None)
    parser.add_argument("--replicas", type=int, default=10)
    parser.add_argument("--namespaces", type=int, default=None, help="default: deployments/10")
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    n = args.deployments or (50 if args.quick else 1000)
    namespaces = args.namespaces or max(1, n // 10)
    result = anyio.run(run, n, args.replicas, namespaces, args.timeout)
    result["python"] = sys.version.split()[0]
    result["mode"] = "quick" if args.quick else "full"
    rows = [
        ("deployments x replicas", f"{n} x {args.replicas} ({result['namespaces']} namespaces)"),
        ("objects (deploy + rs + pods)", f"{n + result['replica_sets'] + result['pods']}"),
        ("wall time to steady state", f"{result['wall_seconds']} s"),
        ("CPU time (whole process)", f"{result['cpu_seconds']} s"),
        ("peak RSS (server + controllers)", f"{result['peak_rss_mib']} MiB"),
        ("API requests, total", f"{result['requests_total']}"),
        (
            "  script: creates / kubelet",
            f"{result['requests_script_creates']} / {result['requests_kubelet']}",
        ),
        ("  controllers", f"{result['requests_controllers']}"),
        ("controller requests / Deployment", f"{result['controller_requests_per_deployment']}"),
        ("controller requests / object", f"{result['controller_requests_per_object']}"),
        ("all requests / object", f"{result['requests_per_object']}"),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    if not args.no_write:
        write_results(RESULTS, result, _plot)


def _plot(result: dict[str, Any]) -> None:
    plt = pyplot()
    t = [row[0] for row in result["timeline"]]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(t, [row[1] for row in result["timeline"]], label="Deployments at steady state")
    ax2 = ax.twinx()
    ax2.plot(t, [row[2] for row in result["timeline"]], color="tab:orange", label="pods made Ready")
    ax.set_xlabel("seconds since the first create")
    ax.set_ylabel("Deployments")
    ax2.set_ylabel("pods")
    ax.set_title(
        f"{result['deployments']} Deployments x {result['replicas']} replicas: "
        f"{result['wall_seconds']} s, {result['peak_rss_mib']} MiB peak"
    )
    lines = ax.get_lines() + ax2.get_lines()
    ax.legend(lines, [line.get_label() for line in lines], loc="lower right")
    save_plot(fig, PLOT)


if __name__ == "__main__":
    main()
