"""The embedded API server against a real kube-apiserver, both secured: creates/s, updates/s and
gets/s of ConfigMaps from one client, and the server's CPU per request, in one run.

Both servers serve HTTPS, authenticate a static bearer token (``--token-auth-file``) and
authorize with RBAC: the client is the user ``bench``, not an administrator, allowed the
ConfigMap verbs by a Role and RoleBinding in its namespace, so each request goes through
authentication, RBAC evaluation and admission. The embedded one is ``kcm apiserver`` in its own
process (state in memory); the real one is ``/work/shared/tools/real-kube``'s kube-apiserver with
its etcd (its CPU counts both processes).

The client runs in its own process: httpx, ``--concurrency`` (20) requests at a time over
kept-alive connections: creates, then JSON merge-patch updates, then gets of ``--count``
ConfigMaps. Reported per phase: requests per wall-clock second, and the server's CPU
(``utime + stime`` from ``/proc``) per 1,000 requests.

    python benchmarks/apiserver_vs_real.py              # 5,000 ConfigMaps, both servers
    python benchmarks/apiserver_vs_real.py --quick      # 1,000
    python benchmarks/apiserver_vs_real.py --only kcm   # the embedded server alone

Without real-kube's binaries the real server is skipped (with a message).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import _real_kube as real_kube  # benchmarks/ (the script's directory)
from _processes import terminate
from _results import pyplot, result_summary, save_plot, write_results

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "apiserver_vs_real.json"
PLOT = ROOT / "docs" / "benchmarks" / "apiserver_vs_real.png"
NAMESPACE = "bench"
PHASES = ("creates", "updates", "gets")
_TICK = os.sysconf("SC_CLK_TCK")
_TOKENS = 'admintoken,admin,admin,system:masters\nbenchtoken,bench,bench,"bench-group"\n'


def process_cpu(pids: list[int]) -> float:
    """``utime + stime`` of ``pids`` together, in seconds."""
    total = 0
    for pid in pids:
        stat = Path(f"/proc/{pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2 :].split()
        total += int(fields[11]) + int(fields[12])
    return total / _TICK


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _setup(server: str) -> None:
    """As the administrator: the namespace, and a Role + RoleBinding for ``bench``."""
    import httpx

    admin = {"Authorization": "Bearer admintoken"}
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "configmaps"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["*"]}],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "bench"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "configmaps"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bench"}],
    }
    rbac = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NAMESPACE}"
    with httpx.Client(base_url=server, verify=False, headers=admin, timeout=30) as http:
        for path, body in (
            ("/api/v1/namespaces", {"metadata": {"name": NAMESPACE}}),
            (f"{rbac}/roles", role),
            (f"{rbac}/rolebindings", binding),
        ):
            http.post(path, json=body).raise_for_status()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # kube-apiserver's RBAC reads through an informer
            probe = http.get(
                f"/api/v1/namespaces/{NAMESPACE}/configmaps",
                headers={"Authorization": "Bearer benchtoken"},
            )
            if probe.status_code == 200:
                return
            time.sleep(0.2)
        probe.raise_for_status()


def client_main(server: str, count: int, concurrency: int, pids: list[int]) -> None:
    """The client process: every phase, printing one JSON line of results."""
    import anyio
    import httpx

    async def run() -> dict[str, Any]:
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        headers = {"Authorization": "Bearer benchtoken"}
        base = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
        results: dict[str, Any] = {}
        async with httpx.AsyncClient(
            base_url=server, verify=False, headers=headers, limits=limits, timeout=60
        ) as http:
            names = [f"cm-{i}" for i in range(count)]

            async def worker(chunk: list[str], phase: str) -> None:
                for name in chunk:
                    if phase == "creates":
                        body = {"metadata": {"name": name}, "data": {"v": "1"}}
                        r = await http.post(base, json=body)
                    elif phase == "updates":
                        r = await http.patch(
                            f"{base}/{name}",
                            content=b'{"data":{"v":"2"}}',
                            headers={"content-type": "application/merge-patch+json"},
                        )
                    else:
                        r = await http.get(f"{base}/{name}")
                    r.raise_for_status()

            for phase in PHASES:
                cpu, start = process_cpu(pids), time.perf_counter()
                async with anyio.create_task_group() as tg:
                    for i in range(concurrency):
                        tg.start_soon(worker, names[i::concurrency], phase)
                wall = time.perf_counter() - start
                server_cpu = process_cpu(pids) - cpu
                results[phase] = {
                    "per_s": round(count / wall, 1),
                    "server_cpu_ms_per_request": round(server_cpu * 1000 / count, 3),
                }
        return results

    print(json.dumps(anyio.run(run)), flush=True)


def _drive(server: str, pids: list[int], args: argparse.Namespace) -> dict[str, Any]:
    _setup(server)
    out = subprocess.run(
        [
            sys.executable,
            __file__,
            "--client",
            server,
            "--count",
            str(args.count),
            "--concurrency",
            str(args.concurrency),
            "--pids",
            ",".join(map(str, pids)),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def measure_kcm(args: argparse.Namespace) -> dict[str, Any]:
    directory = Path(args.dir) / "kcm"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    (directory / "tokens.csv").write_text(_TOKENS)
    port = _free_port()
    log = (directory / "apiserver.log").open("wb")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kcm",
            "apiserver",
            f"--port={port}",
            f"--token-auth-file={directory / 'tokens.csv'}",
            f"--kubeconfig-out={directory / 'kubeconfig'}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        },
    )
    try:
        server = f"https://127.0.0.1:{port}"
        _wait_ready(server)
        return _drive(server, [process.pid], args)
    finally:
        terminate(process)


def measure_real(args: argparse.Namespace) -> dict[str, Any]:
    directory = Path(args.dir) / "real"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    (directory / "bench-tokens.csv").write_text(_TOKENS)
    env = {"EXTRA_APISERVER_FLAGS": f"--token-auth-file={directory / 'bench-tokens.csv'}"}
    pids: list[int] = []
    try:
        pids = real_kube.start(directory, args.api_port, args.etcd_port, with_kcm=False, env=env)
        return _drive(f"https://127.0.0.1:{args.api_port}", pids, args)
    finally:
        real_kube.stop(directory, pids)


def _wait_ready(server: str) -> None:
    import httpx

    deadline = time.monotonic() + 60
    while True:
        try:
            r = httpx.get(
                f"{server}/readyz",
                verify=False,
                headers={"Authorization": "Bearer admintoken"},
                timeout=2,
            )
            if r.status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{server} did not become ready")
        time.sleep(0.3)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 ConfigMaps")
    parser.add_argument("--count", type=int, default=None)
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--only", choices=("kcm", "real"), default=None)
    parser.add_argument("--api-port", type=int, default=30043)
    parser.add_argument("--etcd-port", type=int, default=29979)
    parser.add_argument("--dir", default="/tmp/apiserver-vs-real")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--client", help=argparse.SUPPRESS)
    parser.add_argument("--pids", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.count = args.count or (1000 if args.quick else 5000)
    if args.client:
        client_main(
            args.client, args.count, args.concurrency, [int(p) for p in args.pids.split(",")]
        )
        return
    servers = [args.only] if args.only else ["kcm", "real"]
    if "real" in servers and not real_kube.available():
        print(f"real kube-apiserver skipped: real-kube is absent ({real_kube.REAL_KUBE})")
        servers.remove("real")
    results: dict[str, Any] = {}
    for name in servers:
        results[name] = measure_kcm(args) if name == "kcm" else measure_real(args)
    print(f"{args.count} ConfigMaps, {args.concurrency} concurrent, HTTPS + token + RBAC")
    print(f"{'':<10}" + "".join(f"{s + ' req/s':>14}{s + ' CPU ms/req':>18}" for s in servers))
    for phase in PHASES:
        row = "".join(
            f"{results[s][phase]['per_s']:>14}{results[s][phase]['server_cpu_ms_per_request']:>18}"
            for s in servers
        )
        print(f"{phase:<10}{row}")
    summary = result_summary({"count": args.count, "concurrency": args.concurrency}, results)
    if "kcm" in results and "real" in results:
        summary["kcm_over_real"] = {
            phase: round(results["kcm"][phase]["per_s"] / results["real"][phase]["per_s"], 3)
            for phase in PHASES
        }
        print("embedded / real, requests/s:", summary["kcm_over_real"])
    if not args.no_write:
        write_results(RESULTS, summary, _plot if "kcm" in results and "real" in results else None)


def _plot(summary: dict[str, Any]) -> None:
    plt = pyplot()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4))
    width = 0.4
    for k, (name, label) in enumerate(
        (("kcm", "embedded (kcm apiserver)"), ("real", "kube-apiserver + etcd"))
    ):
        xs = [i + (k - 0.5) * width for i in range(len(PHASES))]
        res = summary["results"][name]
        ax.bar(xs, [res[p]["per_s"] for p in PHASES], width, label=label)
        bx.bar(xs, [res[p]["server_cpu_ms_per_request"] for p in PHASES], width, label=label)
    for axis, title in ((ax, "requests / s"), (bx, "server CPU ms / request")):
        axis.set_xticks(range(len(PHASES)), PHASES)
        axis.set_title(title)
        axis.legend(fontsize=8)
    fig.suptitle(
        f"{summary['count']} ConfigMaps, {summary['concurrency']} concurrent, HTTPS + token + RBAC"
    )
    save_plot(fig, PLOT)


if __name__ == "__main__":
    main()
