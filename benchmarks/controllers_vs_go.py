"""Controller-manager CPU against the Go kube-controller-manager: 1,000 Deployments x 2 replicas
on a real kube-apiserver, to steady state, both managers in one run.

For each manager in turn this starts a fresh real kube-apiserver and etcd
(``/work/shared/tools/real-kube``, or ``$REAL_KUBE``): once with ``--with-kcm`` (the Go
kube-controller-manager, all its default controllers), once without, with ``kcm --kubeconfig``
(all kcm's default controllers) started against it with the same flags (no leader election,
serving off, the same service-account key). Then the same script, in this process:

1. creates the namespaces and waits until the manager has made their default service accounts
   and is quiet;
2. creates the Deployments (32 at a time) and plays the kubelet: every pod the informer shows is
   PATCHed Running and Ready (64 at a time), as ``controllers_scale.py``'s stand-in kubelet
   does — a real kube-apiserver has no kubelet and no scheduler behind it;
3. waits for steady state (every Deployment observed, updated = ready = available = replicas,
   Progressing ``NewReplicaSetAvailable``), then until the manager is quiet again.

Measured: the manager process's CPU time (``utime + stime`` from ``/proc/PID/stat``, not
wall time: the machine is shared) from its start, over the Deployments phase to steady state,
and to quiet. The script's own CPU and the API server's are not counted.

    python benchmarks/controllers_vs_go.py                  # 1,000 x 2, both managers
    python benchmarks/controllers_vs_go.py --quick          # 100 x 2
    python benchmarks/controllers_vs_go.py --only kcm       # one manager (profiling runs)
    python benchmarks/controllers_vs_go.py --repeat 3       # go kcm, kcm go, go kcm: medians

Exits with a message (status 0) when real-kube or its binaries are absent.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _real_kube as real_kube  # benchmarks/ (the script's directory)
import anyio
import msgspec
from _deployments import bench_deployment
from _kubelet import StandInKubelet
from _processes import terminate
from _results import pyplot, result_summary, save_plot, write_results

from kcm.client import ApiClient, load_kubeconfig
from kcm.informers import SharedInformerFactory
from kcm.models.apps_v1 import Deployment
from kcm.models.core_v1 import (
    Namespace,
    Pod,
    ServiceAccount,
)
from kcm.models.meta_v1 import ObjectMeta

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "controllers_vs_go.json"
PLOT = ROOT / "docs" / "benchmarks" / "controllers_vs_go.png"
_TICK = os.sysconf("SC_CLK_TCK")


def process_times(pid: int) -> tuple[float, float]:
    """``utime`` and ``stime`` of ``pid`` in seconds (fields 14, 15 of ``/proc/PID/stat``)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return int(fields[11]) / _TICK, int(fields[12]) / _TICK


def process_cpu(pid: int) -> float:
    """``utime + stime`` of ``pid`` in seconds."""
    return sum(process_times(pid))


def api_connections(pid: int, port: int) -> set[tuple[int, int]]:
    """``pid``'s open TCP connections to ``port`` on loopback, as (local port, socket inode)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[8:-1]))
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, remote, inode = fields[1], fields[2], int(fields[9])
            if inode in inodes and int(remote.rsplit(":", 1)[1], 16) == port:
                found.add((int(local.rsplit(":", 1)[1], 16), inode))
    return found


_AUDIT_POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
"""


def audit_counts(log: Path, agent_prefix: str) -> dict[str, int]:
    """Requests of user agents starting with ``agent_prefix`` in an audit log, by verb and
    resource (``create pods``, ``update replicasets/status``), most frequent first."""
    counts: dict[str, int] = {}
    if not log.exists():
        return counts
    for line in log.read_text().splitlines():
        entry = json.loads(line)
        if not str(entry.get("userAgent", "")).startswith(agent_prefix):
            continue
        ref = entry.get("objectRef") or {}
        resource = ref.get("resource", "")
        if ref.get("subresource"):
            resource += "/" + ref["subresource"]
        key = f"{entry.get('verb')} {resource}"
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def _steady(d: Deployment, replicas: int) -> bool:
    s = d.status
    if s is None or (s.observed_generation or 0) < (d.metadata.generation or 0):
        return False
    if not (s.updated_replicas == s.ready_replicas == s.available_replicas == s.replicas):
        return False
    if s.replicas != replicas:
        return False
    return any(
        c.type == "Progressing" and c.reason == "NewReplicaSetAvailable" for c in s.conditions or ()
    )


async def _quiet(cpu: Callable[[], float], limit: float, idle: float = 0.03) -> float:
    """Wait until ``cpu`` grows by less than ``idle`` s in each of 3 consecutive seconds."""
    deadline = time.monotonic() + limit
    calm, last = 0, cpu()
    while calm < 3 and time.monotonic() < deadline:
        await anyio.sleep(1.0)
        now = cpu()
        calm = calm + 1 if now - last < idle else 0
        last = now
    return last


async def drive(
    kubeconfig: Path,
    cpu: Callable[[], float],
    deployments: int,
    replicas: int,
    namespaces: int,
    limit: float,
    connections: Callable[[], set[tuple[int, int]]],
) -> dict[str, Any]:
    """Steps 1-3 of the module docstring against the cluster of ``kubeconfig``; samples the
    manager's connections to the API server every 0.5 s (``connections``)."""
    config = msgspec.structs.replace(
        load_kubeconfig(kubeconfig), qps=-1, user_agent="controllers-vs-go-driver"
    )
    ns_names = [f"bench-{j}" for j in range(namespaces)]
    timeline: list[tuple[float, int, int]] = []
    seen: set[tuple[int, int]] = set()
    most = 0

    async def sample() -> None:
        nonlocal most
        while True:
            now = connections()
            seen.update(now)
            most = max(most, len(now))
            await anyio.sleep(0.5)

    async with ApiClient(config) as client, anyio.create_task_group() as tg:
        tg.start_soon(sample)
        for ns in ns_names:
            await client.api(Namespace).create(Namespace(metadata=ObjectMeta(name=ns)))
        factory = SharedInformerFactory(client)
        pods = factory.informer_for(Pod)
        d_lister = factory.lister_for(Deployment)
        kubelet = StandInKubelet(client)
        pods.add_event_handler(kubelet)
        await tg.start(factory.run)
        with anyio.fail_after(limit):  # the manager's namespace work (default service accounts)
            while True:
                accounts = await client.api(ServiceAccount).list(
                    field_selector="metadata.name=default"
                )
                if sum(a.metadata.namespace in ns_names for a in accounts.items) == namespaces:
                    break
                await anyio.sleep(0.5)
        cpu_ns = await _quiet(cpu, limit)
        tg.start_soon(kubelet.run)
        start = time.perf_counter()
        cpu_start = cpu()
        create_limiter = anyio.CapacityLimiter(32)

        async def create(i: int) -> None:
            async with create_limiter:
                ns = ns_names[i % namespaces]
                await client.api(Deployment, ns).create(bench_deployment(i, ns, replicas))

        async with anyio.create_task_group() as ctg:
            for i in range(deployments):
                ctg.start_soon(create, i)
        with anyio.fail_after(limit):
            while True:
                done = sum(_steady(d, replicas) for d in d_lister.list())
                timeline.append((time.perf_counter() - start, done, kubelet.marked))
                if done == deployments and kubelet.marked >= deployments * replicas:
                    break
                await anyio.sleep(0.5)
        wall = time.perf_counter() - start
        cpu_steady = cpu()
        cpu_quiet = await _quiet(cpu, limit)
        tg.cancel_scope.cancel()
    return {
        "cpu_startup_and_namespaces": round(cpu_ns, 2),
        "cpu_to_steady": round(cpu_steady - cpu_start, 2),
        "cpu_to_quiet": round(cpu_quiet - cpu_start, 2),
        "cpu_total": round(cpu_quiet, 2),
        "wall_to_steady": round(wall, 2),
        "pods_marked_ready": kubelet.marked,
        "connections_opened": len(seen),
        "connections_most_open": most,
        "timeline": [[round(t, 2), d, p] for t, d, p in timeline],
    }


def _manager_flags(directory: Path, qps: float | None, burst: int | None) -> list[str]:
    """Flags both managers get (real-kube already passes the first three to Go's)."""
    flags = [f"--service-account-private-key-file={directory / 'sa.key'}"]
    if qps is not None:
        flags.append(f"--kube-api-qps={qps:g}")
    if burst is not None:
        flags.append(f"--kube-api-burst={burst}")
    return flags


def measure(manager: str, args: argparse.Namespace) -> dict[str, Any]:
    """One fresh cluster, one manager, one drive."""
    directory = Path(args.dir) / manager
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    extra = _manager_flags(directory, args.qps, args.burst)[1:]
    process: subprocess.Popen[bytes] | None = None
    profiler: subprocess.Popen[bytes] | None = None
    apiserver_env: dict[str, str] = {}
    if args.audit:
        (directory / "audit-policy.yaml").write_text(_AUDIT_POLICY)
        apiserver_env["EXTRA_APISERVER_FLAGS"] = (
            f"--audit-policy-file={directory / 'audit-policy.yaml'} "
            f"--audit-log-path={directory / 'audit.log'} --audit-log-maxsize=0"
        )
    pids: list[int] = []
    try:
        pids = real_kube.start(
            directory,
            args.api_port,
            args.etcd_port,
            with_kcm=manager == "go",
            env={"EXTRA_KCM_FLAGS": " ".join(extra), **apiserver_env},
        )
        if manager == "go":
            pid = pids[-1]
        else:
            # an installed kcm has its bytecode compiled; without it (PYTHONDONTWRITEBYTECODE in
            # a dev shell) every start compiled kcm's sources again (~1 s of start-up CPU)
            subprocess.run(
                [sys.executable, "-m", "compileall", "-q", str(ROOT / "kcm")], check=True
            )
            log = (directory / "kcm.log").open("wb")
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "kcm",
                    f"--kubeconfig={directory / 'kubeconfig'}",
                    "--leader-elect=false",
                    "--secure-port=0",
                    "--status-view=off",
                    *_manager_flags(directory, args.qps, args.burst),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                env={
                    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
                    "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
                },
            )
            pid = process.pid
            if args.profile:
                # py-spy samples kcm (collapsed stacks; --format speedscope for a viewer)
                profiler = subprocess.Popen(
                    [
                        *(args.py_spy, "record", "--pid", str(pid), "--rate", "50", "--gil"),
                        *("--format", "raw", "--output", args.profile),
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )

        def cpu() -> float:
            return process_cpu(pid)

        def connections() -> set[tuple[int, int]]:
            return api_connections(pid, args.api_port)

        result = anyio.run(
            drive,
            directory / "kubeconfig",
            cpu,
            args.deployments,
            args.replicas,
            args.namespaces,
            args.timeout,
            connections,
        )
        result["manager"] = manager
        utime, stime = process_times(pid)
        result["utime"], result["stime"] = round(utime, 2), round(stime, 2)
        if args.audit:
            agent = "kube-controller-manager" if manager == "go" else "kcm"
            counts = audit_counts(directory / "audit.log", agent)
            result["requests"] = sum(counts.values())
            result["requests_by_verb"] = counts
        return result
    finally:
        if profiler is not None:
            profiler.send_signal(signal.SIGINT)
            profiler.wait(60)
        if process is not None:
            terminate(process)
        real_kube.stop(directory, pids)


def run_orders(managers: list[str], repeat: int) -> list[list[str]]:
    """The order of the runs: each manager ``repeat`` times, the order reversed every round.

    Either manager varies by 20-35 % between runs on the shared 2-core machine, and in two
    single pairs the one that ran second measured higher (docs/benchmarks.md, "26 November,
    night"): alternating keeps any such order effect out of the medians.
    """
    return [managers if i % 2 == 0 else managers[::-1] for i in range(repeat)]


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median CPU to quiet (the lower middle one of an even number)."""
    ordered = sorted(runs, key=lambda r: r["cpu_to_quiet"])
    return ordered[(len(ordered) - 1) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 Deployments")
    parser.add_argument("--deployments", type=int, default=None)
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--namespaces", type=int, default=None, help="default: deployments/10")
    parser.add_argument("--only", choices=("go", "kcm"), default=None)
    parser.add_argument("--qps", type=float, default=None, help="both managers' --kube-api-qps")
    parser.add_argument("--burst", type=int, default=None, help="both managers' --kube-api-burst")
    parser.add_argument("--api-port", type=int, default=30043)
    parser.add_argument("--etcd-port", type=int, default=29979)
    parser.add_argument("--dir", default="/tmp/controllers-vs-go")
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--audit", action="store_true", help="count requests (audit log)")
    parser.add_argument("--profile", metavar="FILE", help="py-spy kcm into FILE (raw stacks)")
    parser.add_argument("--py-spy", default="py-spy", help="the py-spy executable")
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="runs of each manager, the order alternating (go kcm, kcm go, ...); the median run",
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    if not real_kube.available():
        print(f"skipped: real-kube or its binaries are absent ({real_kube.REAL_KUBE})")
        return
    logging.basicConfig(level=logging.WARNING)
    args.deployments = args.deployments or (100 if args.quick else 1000)
    args.namespaces = args.namespaces or max(1, args.deployments // 10)
    managers = [args.only] if args.only else ["go", "kcm"]
    runs = {m: [] for m in managers}
    for order in run_orders(managers, args.repeat):
        for m in order:
            runs[m].append(measure(m, args))
            print(f"{m}: {runs[m][-1]['cpu_to_quiet']} s to quiet", flush=True)
    results = {m: median_run(runs[m]) for m in managers}
    rows = [
        "CPU s (manager process)",
        "cpu_startup_and_namespaces",
        "cpu_to_steady",
        "cpu_to_quiet",
        "utime",
        "stime",
        "wall_to_steady",
        "connections_opened",
        "connections_most_open",
    ]
    if args.audit:
        rows.append("requests")
    print(f"{args.deployments} Deployments x {args.replicas}, {args.namespaces} namespaces")
    print(f"{rows[0]:<28}" + "".join(f"{m:>10}" for m in managers))
    for key in rows[1:]:
        print(f"{key:<28}" + "".join(f"{results[m][key]:>10}" for m in managers))
    for m in managers:
        for key, count in list(results[m].get("requests_by_verb", {}).items())[:15]:
            print(f"  {m:<4} {key:<40} {count:>7}")
    settings = {
        "deployments": args.deployments,
        "replicas": args.replicas,
        "namespaces": args.namespaces,
        "qps": args.qps,
        "burst": args.burst,
        # kcm runs on uvloop when it is installed (pykcm[cli] installs it; kcm/cli/_event_loop.py)
        "kcm_event_loop": "uvloop"
        if importlib.util.find_spec("uvloop") and os.environ.get("KCM_EVENT_LOOP") != "asyncio"
        else "asyncio",
    }
    summary = result_summary(settings, results)
    summary["runs_cpu_to_quiet"] = {m: [r["cpu_to_quiet"] for r in runs[m]] for m in managers}
    if "go" in results and "kcm" in results:
        ratio = results["kcm"]["cpu_to_quiet"] / max(results["go"]["cpu_to_quiet"], 1e-9)
        summary["kcm_over_go_cpu_to_quiet"] = round(ratio, 3)
        print(f"kcm / Go CPU (Deployments phase, to quiet): {ratio:.2f}")
    if not args.no_write:
        write_results(RESULTS, summary, _plot if "go" in results and "kcm" in results else None)


def _plot(summary: dict[str, Any]) -> None:
    plt = pyplot()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4))
    managers = ["go", "kcm"]
    labels = ["Go kube-controller-manager", "kcm"]
    keys = ["cpu_startup_and_namespaces", "cpu_to_steady", "cpu_to_quiet"]
    width = 0.25
    for k, key in enumerate(keys):
        values = [summary["results"][m][key] for m in managers]
        ax.bar([i + (k - 1) * width for i in range(2)], values, width, label=key)
    for i, m in enumerate(managers):  # every run's CPU to quiet, on its median's bar
        values = summary.get("runs_cpu_to_quiet", {}).get(m, [])
        ax.plot([i + width] * len(values), values, "k.", markersize=4)
    ax.set_xticks(range(2), labels)
    ax.set_ylabel("CPU seconds")
    ax.set_ylim(0, ax.get_ylim()[1] * 1.3)  # room for the legend above the dots
    ax.set_title("bars: the median run; dots: each run, to quiet", fontsize=9)
    ax.legend(fontsize=8)
    for m, label in zip(managers, labels, strict=True):
        timeline = summary["results"][m]["timeline"]
        bx.plot([row[0] for row in timeline], [row[1] for row in timeline], label=label)
    bx.set_xlabel("seconds since the first create")
    bx.set_ylabel("Deployments at steady state")
    bx.legend(loc="lower right")
    fig.suptitle(
        f"{summary['deployments']} Deployments x {summary['replicas']} on a real kube-apiserver"
    )
    save_plot(fig, PLOT)


if __name__ == "__main__":
    main()
