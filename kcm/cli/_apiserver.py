"""``kcm apiserver``: serve the embedded API server in the foreground."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from pathlib import Path
from typing import Any

import anyio

from ._admission_flags import add_admission_flags, admission_plugins_from
from ._event_loop import run_event_loop
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
        "--kubeconfig-out",
        default=None,
        help="write a kubeconfig (mode 0600, an administrator's client certificate) for this "
        "server to FILE (default: DATA_DIR/kubeconfig with --data-dir)",
    )
    parser.add_argument(
        "--token", default=None, help="accept this bearer token for an administrator"
    )
    parser.add_argument(
        "--token-auth-file",
        default=None,
        metavar="FILE",
        help='static bearer tokens, kube\'s CSV: token,user,uid,"group1,group2"',
    )
    parser.add_argument(
        "--client-ca-file",
        default=None,
        metavar="FILE",
        help="PEM CA bundle client certificates are verified against (default: the server's "
        "own CA, kept in DATA_DIR/pki)",
    )
    parser.add_argument(
        "--anonymous-auth",
        type=_flag_bool,
        default=False,
        metavar="BOOL",
        help="requests without credentials act as system:anonymous instead of getting 401 "
        "(default false)",
    )
    parser.add_argument(
        "--tls",
        action="store_true",
        help="serve HTTPS (the default; kept for scripts that pass it)",
    )
    parser.add_argument(
        "--insecure-http",
        action="store_true",
        help="serve plain HTTP; without --token/--token-auth-file nobody is authenticated "
        "and anyone who can reach the port is an administrator",
    )
    parser.add_argument(
        "--encryption-provider-config",
        default=None,
        metavar="FILE",
        help="an apiserver.config.k8s.io/v1 EncryptionConfiguration: encrypt the resources it "
        "names (Secrets) in --data-dir with aescbc or aesgcm",
    )
    add_admission_flags(parser)
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


def _flag_bool(value: str) -> bool:
    """``true``/``false`` as Go's flag package parses a bool."""
    lowered = value.lower()
    if lowered in ("1", "t", "true"):
        return True
    if lowered in ("0", "f", "false"):
        return False
    raise argparse.ArgumentTypeError(f"invalid boolean value {value!r}")


def run(args: argparse.Namespace) -> int:
    from kcm.apiserver import (
        ApiServer,
        DataDirLocked,
        EncryptionConfigError,
        EncryptionError,
        Limits,
    )

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    if args.insecure_http and args.tls:
        print("error: --tls and --insecure-http exclude each other", file=sys.stderr)
        return 2
    if args.insecure_http:
        anyone = not (args.token or args.token_auth_file)
        print(
            "warning: --insecure-http: serving plain HTTP"
            + (
                " without authentication: anyone who can reach it is a cluster administrator"
                if anyone
                else ": tokens travel in clear text (and kubectl will not send them)"
            ),
            file=sys.stderr,
        )
    kubeconfig_out = args.kubeconfig_out
    if kubeconfig_out is None and args.data_dir:
        kubeconfig_out = str(Path(args.data_dir) / "kubeconfig")

    if args.encryption_provider_config and not args.data_dir:
        print(
            "kcm apiserver: error: --encryption-provider-config needs --data-dir",
            file=sys.stderr,
        )
        return 1
    try:
        admission_plugins = admission_plugins_from(args)
    except ValueError as exc:
        print(f"kcm apiserver: error: {exc}", file=sys.stderr)
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
            tls=not args.insecure_http,
            token_auth_file=args.token_auth_file,
            client_ca_file=args.client_ca_file,
            anonymous_auth=args.anonymous_auth,
            limits=limits,
            encryption_config=args.encryption_provider_config,
            admission_plugins=admission_plugins,
        )
        async with server:
            if kubeconfig_out:
                server.write_kubeconfig(kubeconfig_out)
            print(f"kcm apiserver serving on {server.url}", flush=True)
            if kubeconfig_out:
                print(f"kubeconfig written to {kubeconfig_out}", flush=True)
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for signum in signals:
                    print(f"received {signal.Signals(signum).name}, stopping", flush=True)
                    return

    try:
        run_event_loop(serve)
    except (DataDirLocked, EncryptionConfigError, EncryptionError) as exc:
        print(f"kcm apiserver: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    return 0
