"""kube-controller-manager's secure serving, delegated authn/authz and logging flags.

Those kcm acts on set :class:`ServingSettings`; the rest of the same option groups are
accepted (a kubeadm manifest passes them) and named in one log line at start, never a parse
error.
"""

from __future__ import annotations

import argparse
import csv
from dataclasses import dataclass
from typing import Any

from ._kube_flags import kube_flag_parser
from ._values import ip_address, port

__all__ = [
    "DEFAULT_ALWAYS_ALLOW_PATHS",
    "RequestHeaderSettings",
    "ServingSettings",
    "add_logging_flags",
    "add_serving_flags",
    "serving_from",
]

DEFAULT_ALWAYS_ALLOW_PATHS = ("/healthz", "/readyz", "/livez")
"""kube-controller-manager's ``--authorization-always-allow-paths``."""


@dataclass(frozen=True, kw_only=True)
class ServingSettings:
    """The secure port's TLS files and delegated authn/authz (see ``kcm run --help``).

    ``tracing_config_file`` is the OpenTelemetry ``TracingConfiguration`` (observability
    beside serving); ``accepted`` holds the flags given that kcm takes without acting on them.
    """

    tls_cert_file: str | None = None
    tls_private_key_file: str | None = None
    cert_dir: str | None = None
    authentication_kubeconfig: str | None = None
    authorization_kubeconfig: str | None = None
    always_allow_paths: tuple[str, ...] = DEFAULT_ALWAYS_ALLOW_PATHS
    client_ca_file: str | None = None
    requestheader: RequestHeaderSettings | None = None
    tracing_config_file: str | None = None
    accepted: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class RequestHeaderSettings:
    """``--requestheader-*``: a front proxy's CA, the CNs it may have (empty: any) and the
    headers that name the user (kube's defaults)."""

    client_ca_file: str
    allowed_names: tuple[str, ...] = ()
    username_headers: tuple[str, ...] = ("x-remote-user",)
    group_headers: tuple[str, ...] = ("x-remote-group",)
    extra_headers_prefixes: tuple[str, ...] = ("x-remote-extra-",)


_REQUESTHEADER_LISTS = {
    "--requestheader-allowed-names": (
        "LIST",
        "front proxy certificate CNs allowed to name users in headers (default: any the CA issued)",
    ),
    "--requestheader-username-headers": ("LIST", "headers naming the user (default x-remote-user)"),
    "--requestheader-group-headers": ("LIST", "headers naming groups (default x-remote-group)"),
    "--requestheader-extra-headers-prefix": (
        "LIST",
        "header prefixes naming user extras (default x-remote-extra-)",
    ),
}


_ACCEPTED_SERVING = (
    "--authentication-skip-lookup",
    "--authentication-tolerate-lookup-failure",
    "--authentication-token-webhook-cache-ttl",
    "--authorization-webhook-cache-authorized-ttl",
    "--authorization-webhook-cache-unauthorized-ttl",
    "--http2-max-streams-per-connection",
    "--permit-address-sharing",
    "--permit-port-sharing",
    "--tls-cipher-suites",
    "--tls-min-version",
    "--tls-sni-cert-key",
)
"""Flags of kube's secure serving and delegation groups that kcm accepts as no-ops: the
in-cluster lookup of the client and front proxy CAs (``extension-apiserver-authentication``)
is not done (give the files), cache TTLs are kube's defaults, TLS parameters are Python's
defaults (TLS 1.2+), sharing and HTTP/2 options do not apply."""

_ACCEPTED_LOGGING = (
    "--add-dir-header",
    "--alsologtostderr",
    "--log-backtrace-at",
    "--log-dir",
    "--log-file",
    "--log-file-max-size",
    "--log-flush-frequency",
    "--logtostderr",
    "--one-output",
    "--skip-headers",
    "--skip-log-headers",
    "--stderrthreshold",
    "--vmodule",
)
"""klog's flags kcm accepts as no-ops: it always logs to stderr, with headers."""


def _accept(group: Any, flags: tuple[str, ...]) -> None:
    """No-op flags, each parsed as its Go type (a bad value is a usage error, as in kube)."""
    for flag in flags:
        go_type, parse = kube_flag_parser(flag)
        what = "accepted as kube-controller-manager's; no effect in kcm"
        if go_type == "bool":  # --flag or --flag=BOOL, as pflag
            group.add_argument(
                flag,
                nargs="?",
                const=True,
                type=parse,
                default=None,
                metavar="BOOL",
                dest=_accepted_dest(flag),
                help=what,
            )
            continue
        group.add_argument(
            flag,
            type=parse,
            default=None,
            metavar=go_type.upper() if go_type.isalpha() else "VALUE",
            dest=_accepted_dest(flag),
            help=what,
        )


def _accepted_dest(flag: str) -> str:
    return "accepted_" + flag.lstrip("-").replace("-", "_")


def add_serving_flags(parser: argparse.ArgumentParser, *, default_port: int = 10257) -> None:
    """``--secure-port``, ``--bind-address``, TLS and delegated authn/authz flags."""
    srv = parser.add_argument_group(
        "secure serving",
        "/healthz, /livez, /readyz and /metrics over HTTPS (a self-signed certificate made in "
        "memory unless --tls-cert-file/--tls-private-key-file). Other flags of kube's secure "
        "serving, authentication and authorization groups are accepted and ignored.",
    )
    srv.add_argument(
        "--bind-address",
        type=ip_address,
        default=None,
        metavar="IP",
        help="address (default 127.0.0.1 in embedded mode, so a laptop does not serve it to "
        "the network; 0.0.0.0 against a cluster, as kube-controller-manager)",
    )
    srv.add_argument(
        "--secure-port",
        type=port,
        default=default_port,
        metavar="PORT",
        help=f"HTTPS port; 0 turns serving off (default {default_port}; in embedded mode a "
        "free port when it is taken)",
    )
    srv.add_argument("--tls-cert-file", metavar="FILE", help="serving certificate (PEM)")
    srv.add_argument("--tls-private-key-file", metavar="FILE", help="its key (PEM)")
    srv.add_argument(
        "--cert-dir",
        metavar="DIR",
        help="where kube-controller-manager.crt/.key are read from when the --tls-* files "
        "are not given (without them: a self-signed pair in memory)",
    )
    srv.add_argument(
        "--authentication-kubeconfig",
        metavar="PATH",
        help="kubeconfig TokenReviews go through (bearer tokens on the secure port)",
    )
    srv.add_argument(
        "--authorization-kubeconfig",
        metavar="PATH",
        help="kubeconfig SubjectAccessReviews go through (e.g. get /metrics); without it "
        "(and outside a pod) /metrics is only for system:masters client certificates, as "
        "kube's (embedded mode without delegation flags: open on loopback)",
    )
    srv.add_argument(
        "--authorization-always-allow-paths",
        metavar="LIST",
        default=",".join(DEFAULT_ALWAYS_ALLOW_PATHS),
        help="paths allowed without a SubjectAccessReview (default "
        f"{','.join(DEFAULT_ALWAYS_ALLOW_PATHS)})",
    )
    srv.add_argument(
        "--client-ca-file",
        metavar="FILE",
        help="PEM CA bundle: a client certificate it issued authenticates as user CN, groups O "
        "(asked for, not required)",
    )
    srv.add_argument(
        "--requestheader-client-ca-file",
        metavar="FILE",
        help="PEM CA bundle of front proxies: a proxy certificate it issued lets the "
        "--requestheader-* headers name the user",
    )
    for flag, (metavar, text) in _REQUESTHEADER_LISTS.items():
        srv.add_argument(flag, action="append", type=_string_slice, metavar=metavar, help=text)
    _accept(srv, _ACCEPTED_SERVING)


def _string_slice(text: str) -> list[str]:
    """pflag's ``[]string`` value: comma-separated (CSV quoting), empty text is no items."""
    return next(csv.reader([text])) if text else []


def _requestheader_from(args: argparse.Namespace) -> RequestHeaderSettings | None:
    """The front proxy settings (None without a CA: the other flags then do nothing, as in
    kube); a list flag given replaces kube's default, repeated ones add up."""
    if not args.requestheader_client_ca_file:
        return None
    default = RequestHeaderSettings(client_ca_file=args.requestheader_client_ca_file)

    def given(flag: str, kube_default: tuple[str, ...]) -> tuple[str, ...]:
        values = getattr(args, flag.lstrip("-").replace("-", "_"))
        return kube_default if values is None else tuple(v for items in values for v in items)

    return RequestHeaderSettings(
        client_ca_file=default.client_ca_file,
        allowed_names=given("--requestheader-allowed-names", default.allowed_names),
        username_headers=given("--requestheader-username-headers", default.username_headers),
        group_headers=given("--requestheader-group-headers", default.group_headers),
        extra_headers_prefixes=given(
            "--requestheader-extra-headers-prefix", default.extra_headers_prefixes
        ),
    )


def add_logging_flags(group: Any) -> None:
    """``--tracing-config-file``, and klog's flags kcm takes without acting on (``-v`` and
    ``--logging-format`` are kcm's)."""
    group.add_argument(
        "--tracing-config-file",
        metavar="FILE",
        help="OpenTelemetry tracing of reconciles and API requests (kube's "
        "TracingConfiguration: endpoint, samplingRatePerMillion; needs kcm[otel]); "
        "OTEL_TRACES_EXPORTER=otlp|console also turns it on (default off)",
    )
    _accept(group, _ACCEPTED_LOGGING)


def serving_from(args: argparse.Namespace) -> ServingSettings:
    """The serving settings of parsed flags (a TLS file without its pair is an error at
    start, as kube's, not a usage error: :func:`~._secure_serving.serving_options`)."""
    accepted = tuple(
        flag
        for flag in (*_ACCEPTED_SERVING, *_ACCEPTED_LOGGING)
        if getattr(args, _accepted_dest(flag), None) is not None
    )
    paths = tuple(p.strip() for p in str(args.authorization_always_allow_paths).split(","))
    return ServingSettings(
        tls_cert_file=args.tls_cert_file,
        tls_private_key_file=args.tls_private_key_file,
        cert_dir=args.cert_dir,
        authentication_kubeconfig=args.authentication_kubeconfig,
        authorization_kubeconfig=args.authorization_kubeconfig,
        always_allow_paths=tuple(p for p in paths if p),
        client_ca_file=args.client_ca_file or None,
        requestheader=_requestheader_from(args),
        tracing_config_file=getattr(args, "tracing_config_file", None),
        accepted=accepted,
    )
