"""``kcm bench``: the informer benchmark as a user command.

Against the cluster in ``--kubeconfig`` or, without it, an embedded API server in its own
process: create ``--objects`` objects in a fresh namespace, list-sync a SharedIndexInformer
(objects/s), make ``--updates`` updates, then watch them (events/s), and report the memory the
cache took per object. ``--peers`` measures the other Python clients that are installed the
same way, each in its own process; ``--plot FILE`` draws the figures (needs matplotlib).
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import os
import secrets
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from kcm._extras import require

from ._values import non_negative_int

__all__ = ["add_parser", "run"]

_RESOURCE_HELP = (
    "pods, configmaps, or GROUP/VERSION/RESOURCE (v1/secrets, apps/v1/deployments: no load "
    "generator, measures what --namespace holds; needs --objects 0 --updates 0)"
)


def add_parser(subparsers: argparse._SubParsersAction[Any]) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="measure informer list and watch throughput and memory per object",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
    )
    parser.add_argument(
        "--kubeconfig",
        default=None,
        metavar="FILE",
        help="the cluster to measure (default: an embedded API server started for the run)",
    )
    parser.add_argument("--context", default=None, help="kubeconfig context (default: current)")
    parser.add_argument(
        "--resource", type=_resource, default="pods", help=_RESOURCE_HELP + " (default pods)"
    )
    parser.add_argument(
        "--objects", type=non_negative_int, default=5000, help="objects to create (default 5000)"
    )
    parser.add_argument(
        "--updates", type=non_negative_int, default=5000, help="updates to watch (default 5000)"
    )
    parser.add_argument(
        "--namespace",
        default=None,
        help="namespace to measure (default: a fresh kcm-bench-XXXXXX, deleted afterwards)",
    )
    parser.add_argument(
        "--peers",
        action="store_true",
        help="also measure lightkube and the official kubernetes client if installed",
    )
    parser.add_argument(
        "--plot", default=None, metavar="FILE", help="draw the results into FILE (matplotlib)"
    )
    parser.set_defaults(func=run)


def _resource(value: str) -> str:
    from ._bench_load import BUILTIN

    parts = value.split("/")
    if value in BUILTIN or (len(parts) in (2, 3) and all(parts)):
        return value
    raise argparse.ArgumentTypeError(f"{value!r} is not pods, configmaps or GROUP/VERSION/RESOURCE")


def _usage_error(message: str) -> int:
    print(f"kcm bench: error: {message}; see kcm bench --help", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    from ._bench_load import BUILTIN

    if args.resource not in BUILTIN and (args.objects or args.updates):
        return _usage_error(
            f"the load generator makes pods and configmaps only; for {args.resource} pass "
            "--objects 0 --updates 0 (and --namespace) to measure what the cluster holds"
        )
    if args.resource not in BUILTIN and args.peers:
        return _usage_error("--peers measures pods and configmaps only")
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        return _usage_error("--plot needs matplotlib: install matplotlib (pip install matplotlib)")
    if args.kubeconfig and not Path(args.kubeconfig).is_file():
        return _usage_error(f"--kubeconfig {args.kubeconfig}: no such file")
    if args.updates and not args.objects and args.namespace is None:
        return _usage_error("--updates needs objects to update: pass --objects")

    require("rich", extra="cli", feature="kcm bench")
    if args.kubeconfig is None:
        require("hypercorn", extra="server", feature="kcm bench's embedded API server")

    from rich.console import Console

    from ._bench_report import plot, table

    # Not a terminal (a pipe, a CI log): wide enough that the table's columns are not cut.
    console = Console(width=None if sys.stdout.isatty() else 120)
    with ExitStack() as stack:
        kubeconfig = args.kubeconfig
        if kubeconfig is None:
            from ._bench_server import start_server

            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="kcm-bench-"))
            kubeconfig = os.path.join(tmp, "kubeconfig")
            proc, url = start_server(args.objects + args.updates + 10_000, kubeconfig)
            stack.callback(_stop, proc)
            target = f"embedded API server at {url}"
        else:
            target = f"the cluster in {args.kubeconfig}"
        console.print(f"kcm bench: {args.resource} on {target}")
        try:
            rows = _measure(args, kubeconfig, console)
        except (OSError, RuntimeError, TimeoutError, ValueError) as exc:
            print(f"kcm bench: error: {exc}", file=sys.stderr)
            return 1
    console.print(table(rows))
    if args.plot:
        plot(rows, args.plot, title=f"kcm bench: {args.objects} {args.resource}, {target}")
        console.print(f"plot written to {args.plot}")
    return 0


def _stop(proc: subprocess.Popen[str]) -> None:
    """Close the server's stdin (it stops) and reap it; kill it if it does not."""
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.close()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    proc.stdout.close()


def _measure(args: argparse.Namespace, kubeconfig: str, console: Any) -> list[dict[str, Any]]:
    import anyio
    import msgspec
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from kcm.client import ApiClient, load_kubeconfig
    from kcm.errors import ApiError, NotFound
    from kcm.models.core_v1 import Namespace

    from ._bench_informer import measure_informer
    from ._bench_load import create_objects, ensure_namespace, resolve, update_objects
    from ._bench_peers import PEERS, installed_peers, run_peer

    config = msgspec.structs.replace(load_kubeconfig(kubeconfig, context=args.context), qps=-1)
    namespace = args.namespace or f"kcm-bench-{secrets.token_hex(3)}"
    fresh = args.namespace is None
    rows: list[dict[str, Any]] = []

    async def main() -> None:
        async with ApiClient(config) as client:
            api = await resolve(client, args.resource, namespace)
            columns = (TextColumn("{task.description:<10}"), BarColumn(), MofNCompleteColumn())
            with Progress(*columns, console=console, transient=False) as progress:
                try:
                    if args.objects:
                        await ensure_namespace(client, namespace)
                        task = progress.add_task("create", total=args.objects)
                        await create_objects(
                            api,
                            args.resource,
                            args.objects,
                            lambda n: progress.advance(task, n),
                        )
                    listed = progress.add_task("list", total=None)
                    updated = progress.add_task("update", total=args.updates, visible=False)
                    watched = progress.add_task("watch", total=args.updates, visible=False)

                    async def make_updates() -> None:
                        if args.updates:
                            progress.update(updated, visible=True)
                            await update_objects(
                                api,
                                args.objects,
                                args.updates,
                                lambda n: progress.advance(updated, n),
                            )
                        progress.update(watched, visible=True)

                    result = await measure_informer(
                        api,
                        updates=args.updates,
                        make_updates=make_updates,
                        on_listed=lambda n: progress.update(listed, total=n, completed=n),
                        on_event=lambda k: progress.update(watched, completed=k),
                    )
                    rows.append({"name": "kcm", "label": "kcm informer", **vars(result)})
                    for peer in installed_peers() if args.peers else []:
                        task = progress.add_task(peer, total=None)
                        figures = await anyio.to_thread.run_sync(
                            functools.partial(
                                run_peer,
                                peer,
                                kubeconfig=kubeconfig,
                                namespace=namespace,
                                resource=args.resource,
                                resource_version=result.list_resource_version,
                                updates=args.updates,
                                timeout=600.0,
                            )
                        )
                        progress.update(task, total=1, completed=1)
                        rows.append({"name": peer, "label": PEERS[peer], **figures})
                finally:
                    if fresh and args.objects:
                        with anyio.CancelScope(shield=True):
                            try:
                                await client.api(Namespace).delete(namespace)
                            except (NotFound, ApiError):
                                pass

    anyio.run(main)
    return rows
