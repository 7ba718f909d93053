"""``kcm apiserver``: serve the embedded API server in the foreground."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from typing import Any

import anyio

from ._values import listen_host, non_negative_int, parse_duration, port

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction[Any]) -> None:
    parser = subparsers.add_parser(
        "apiserver",
        help="serve the embedded Kubernetes-compatible API server",
        description="Serve kcm's embedded, Kubernetes-compatible API server until interrupted "
        "and write a kubeconfig that kubectl and kcm can use.",
    )
    parser.add_argument(
        "--port", type=port, default=6443, help="TCP port (0 picks a free one; default 6443)"
    )
    parser.add_argument(
        "--host",
        type=listen_host,
        default="127.0.0.1",
        help="IP address (or localhost) to listen on (default: loopback only)",
    )
    parser.add_argument(
        "--data-dir", default=None, help="keep state in SQLite here (default: in memory)"
    )
    parser.add_argument(
        "--kubeconfig-out", default=None, help="write a kubeconfig for this server to FILE"
    )
    parser.add_argument("--token", default=None, help="require this bearer token")
    parser.add_argument(
        "--tls", action="store_true", help="serve HTTPS with a generated self-signed CA"
    )
    parser.add_argument(
        "--encryption-provider-config",
        default=None,
        metavar="FILE",
        help="an apiserver.config.k8s.io/v1 EncryptionConfiguration: encrypt the resources it "
        "names (Secrets) in --data-dir with aescbc or aesgcm",
    )
    limits = parser.add_argument_group("limits (kube-apiserver's flags and defaults)")
    limits.add_argument(
        "--max-request-body-bytes",
        type=non_negative_int,
        default=3 * 1024 * 1024,
        help="refuse a larger request body with 413 (default 3145728; 0: no limit)",
    )
    limits.add_argument(
        "--request-timeout",
        type=parse_duration,
        default=60.0,
        help="seconds a client has to send its request body, then 504 (default 60; 0: none)",
    )
    limits.add_argument(
        "--max-requests-inflight",
        type=non_negative_int,
        default=400,
        help="concurrent read requests before 429 (default 400; 0: no limit)",
    )
    limits.add_argument(
        "--max-mutating-requests-inflight",
        type=non_negative_int,
        default=200,
        help="concurrent writes before 429 (default 200; 0: no limit)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kcm.apiserver import (
        ApiServer,
        DataDirLocked,
        EncryptionConfigError,
        EncryptionError,
        Limits,
    )

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    if args.host not in ("127.0.0.1", "::1", "localhost") and not args.token:
        print(
            f"warning: serving on {args.host} without --token: anyone who can reach it can "
            "change the cluster",
            file=sys.stderr,
        )

    if args.encryption_provider_config and not args.data_dir:
        print(
            "kcm apiserver: error: --encryption-provider-config needs --data-dir",
            file=sys.stderr,
        )
        return 1
    limits = Limits(
        max_request_body_bytes=args.max_request_body_bytes,
        request_timeout=args.request_timeout,
        max_requests_inflight=args.max_requests_inflight,
        max_mutating_requests_inflight=args.max_mutating_requests_inflight,
    )

    async def serve() -> None:
        server = ApiServer(
            data_dir=args.data_dir,
            port=args.port,
            host=args.host,
            token=args.token,
            tls=args.tls,
            limits=limits,
            encryption_config=args.encryption_provider_config,
        )
        async with server:
            if args.kubeconfig_out:
                server.write_kubeconfig(args.kubeconfig_out)
            print(f"kcm apiserver serving on {server.url}", flush=True)
            if args.kubeconfig_out:
                print(f"kubeconfig written to {args.kubeconfig_out}", flush=True)
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for signum in signals:
                    print(f"received {signal.Signals(signum).name}, stopping", flush=True)
                    return

    try:
        anyio.run(serve)
    except (DataDirLocked, EncryptionConfigError, EncryptionError) as exc:
        print(f"kcm apiserver: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    return 0
