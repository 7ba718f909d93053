"""``kcm run``'s flags (kube-controller-manager's names and defaults) and the config file.

Flags are parsed in two passes: the first only finds ``--config``; the file's settings then
become the parser's defaults, so a flag given on the command line always wins over the file,
and the file wins over the built-in defaults. Every value goes through the same parser
whether it came from a flag or the file.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from kcm.controllers import CONTROLLERS, ControllerSpec, enabled_controllers
from kcm.errors import ConfigError
from kcm.leaderelection import LeaderElectionConfig
from kcm.simulation import SimulationConfig

from ._admission_flags import add_admission_flags, admission_plugins_from
from ._cloud import add_cloud_flags
from ._kube_flags import (
    KUBE_DEFAULT_CONTROLLERS,
    _Accumulate,
    add_compatibility_flags,
    add_feature_gates_flag,
    compatibility_flags_given,
)
from ._serving_flags import add_logging_flags, add_serving_flags, serving_from
from ._settings import RunSettings
from ._values import (
    UsageErrorParser,
    format_duration,
    non_negative_int,
    parse_bool,
    parse_duration,
    port,
    positive_int,
)

__all__ = ["build_run_parser", "default_data_dir", "parse_run_args"]

RESOURCE_LOCKS = ("leases", "configmapsleases")
KCM_LEASE = "kcm"
"""kcm's default lease name (kube-system/kcm); kube-controller-manager's is its own name."""
KUBE_LEASE = "kube-controller-manager"

_SIM = SimulationConfig()


def default_data_dir() -> Path:
    """``$XDG_DATA_HOME/kcm``, else ``~/.local/share/kcm``."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "kcm"


def _controller_list() -> str:
    width = max(len(name) for name in CONTROLLERS)
    lines = [f"  {name:<{width}}  {spec.help}" for name, spec in CONTROLLERS.items()]
    heading = "controllers (--controllers; '*' turns on all but those off by default):"
    return heading + "\n" + "\n".join(lines)


_DESCRIPTION = """\
kcm: a Kubernetes controller manager in Python.

With --kubeconfig, --master, $KUBECONFIG or an in-cluster service account, kcm runs the
controllers against that cluster. With none of those it starts an embedded API server (state
in --data-dir), writes a kubeconfig there, prints how to point kubectl at it, and simulates
a few Ready nodes that run pods (see --simulate-*). ~/.kube/config is not read implicitly:
pass --kubeconfig ~/.kube/config to use it.

Flags take --flag=value or --flag value; booleans --flag (true) or --flag=false, never
--flag false (as kube's flags: a value after a space is an argument, and kcm takes none). A
YAML --config file takes the same settings by flag name (leader-elect: false); flags win.

Other commands: kcm apiserver (serve the embedded API server alone; kcm apiserver --help),
kcm cloud-controller-manager (the cloud controllers on a provider plugin; its --help)."""


class _BoolAction(argparse.Action):
    """A boolean flag: ``--flag`` (true) or ``--flag=VALUE``. As with kube's (pflag) flags
    it never takes the next argument as its value: :func:`parse_run_args` rewrites a bare
    ``--flag`` to ``--flag=true`` before parsing, so ``--flag false`` leaves a stray
    ``false``, which is a usage error."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        kwargs.update(nargs=None, type=parse_bool, metavar="BOOL")
        super().__init__(option_strings, dest, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Shows a boolean flag as ``--flag[=BOOL]``."""

    def _format_action_invocation(self, action: argparse.Action) -> str:
        if isinstance(action, _BoolAction):
            return ", ".join(f"{option}[=BOOL]" for option in action.option_strings)
        return super()._format_action_invocation(action)


def _bool_flag(group: Any, *names: str, default: bool | None, help: str, dest: str) -> None:
    group.add_argument(*names, action=_BoolAction, default=default, dest=dest, help=help)


def _duration_flags(group: Any, *flags: tuple[str, float, str]) -> None:
    """One Go-duration flag per ``(flag, default seconds, what it sets)``."""
    for flag, default, what in flags:
        group.add_argument(
            flag,
            type=parse_duration,
            default=default,
            metavar="DURATION",
            help=f"{what} (default {format_duration(default)})",
        )


def build_run_parser(prog: str = "kcm run") -> argparse.ArgumentParser:
    """The parser of ``kcm run`` (``kcm`` with no command is the same).

    One function per group of ``--help``, in the order the groups are shown.
    """
    parser = UsageErrorParser(
        prog=prog,
        usage="%(prog)s [flags]",
        description=_DESCRIPTION,
        epilog=_controller_list(),
        formatter_class=_HelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument(
        "--config", metavar="FILE", help="YAML file with any of these settings (flags win)"
    )
    _add_connection_flags(parser)
    _add_controller_flags(parser)
    add_cloud_flags(parser)
    _add_leader_election_flags(parser)
    _add_serving_flags(parser)
    _add_embedded_flags(parser)
    _add_simulation_flags(parser)
    _add_output_flags(parser)
    add_compatibility_flags(parser, _bool_flag)  # last: only flags no group above defines
    return parser


def _add_connection_flags(parser: argparse.ArgumentParser) -> None:
    """Which cluster to manage and how hard to drive its API server."""
    conn = parser.add_argument_group("connection")
    conn.add_argument("--kubeconfig", metavar="PATH", help="kubeconfig of the cluster to manage")
    conn.add_argument("--master", metavar="URL", help="API server URL (overrides the kubeconfig)")
    conn.add_argument(
        "--kube-api-qps",
        type=float,
        default=20.0,
        metavar="QPS",
        help="client QPS limit (default 20)",
    )
    conn.add_argument(
        "--kube-api-burst",
        type=positive_int,
        default=30,
        metavar="N",
        help="client burst (default 30)",
    )
    _bool_flag(
        conn,
        "--use-service-account-credentials",
        default=False,
        dest="use_service_account_credentials",
        help="each controller talks as its own ServiceAccount, kube-system/<name>-controller "
        "(created if missing; a TokenRequest token, renewed), as kube-controller-manager's "
        "(default false: every controller uses kcm's own credentials)",
    )


def _add_controller_flags(parser: argparse.ArgumentParser) -> None:
    """``--controllers``, then each registered controller's own flags, then the GC switch."""
    ctl = parser.add_argument_group("controllers")
    _add_controllers_flag(
        parser,
        ctl,
        help="'*' (all but those off by default: "
        + ", ".join(n for n, spec in CONTROLLERS.items() if not spec.enabled_by_default)
        + "), 'name' (on), '-name' (off); the first entry naming a controller wins; "
        "comma-separated or repeated (default '*')",
    )
    add_feature_gates_flag(ctl)
    _add_registry_flags(ctl)
    _bool_flag(
        ctl,
        "--enable-garbage-collector",
        default=True,
        dest="enable_garbage_collector",
        help="run the garbage collector (default true; must match the API server's setting)",
    )


def _add_controllers_flag(parser: argparse.ArgumentParser, ctl: Any, *, help: str) -> None:
    """``--controllers`` in group ``ctl``: a flag given wins over the config file's
    ``controllers`` (a parser default, ``*`` without one); :func:`_controller_selection` reads
    them back."""
    ctl.add_argument(
        "--controllers", action=_Accumulate, dest="controllers_flag", metavar="LIST", help=help
    )
    parser.set_defaults(controllers=["*"])


def _controller_selection(args: argparse.Namespace) -> list[str]:
    """The ``--controllers`` entries: the flags', else the config file's (else ``*``)."""
    return list(args.controllers_flag if args.controllers_flag is not None else args.controllers)


def _add_registry_flags(ctl: Any, specs: Mapping[str, ControllerSpec] = CONTROLLERS) -> None:
    """Workers and options of every controller in ``specs`` (:data:`CONTROLLERS`), in
    registry order; :func:`_settings_from` reads them back by the same ``dest`` names."""
    added: set[str] = set()
    for name, spec in specs.items():
        if spec.workers_flag is not None:
            ctl.add_argument(
                spec.workers_flag,
                *spec.workers_aliases,
                dest=f"workers_{spec.package}",
                type=positive_int,
                default=spec.default_workers,
                metavar="N",
                help=f"concurrent {name} reconciles (default {spec.default_workers})",
            )
        for option in spec.options:
            if option.flag in added:  # shared by several controllers: one flag
                continue
            added.add(option.flag)
            if isinstance(option.default, bool):  # --flag or --flag=BOOL, as pflag
                _bool_flag(
                    ctl,
                    option.flag,
                    default=option.default,
                    help=f"{option.help} (default {str(option.default).lower()})",
                    dest=_option_dest(option.flag),
                )
                continue
            is_duration = option.is_duration
            ctl.add_argument(
                option.flag,
                dest=_option_dest(option.flag),
                type=option.type,
                default=option.default,
                metavar="DURATION" if is_duration else "VALUE",
                help=f"{option.help} (default "
                f"{format_duration(option.default) if is_duration else option.default})",
            )


def _option_dest(flag: str) -> str:
    """The parser attribute of a controller option (by flag, so a shared flag has one)."""
    return "option_" + flag.lstrip("-").replace("-", "_")


def _add_leader_election_flags(parser: argparse.ArgumentParser) -> None:
    """kube-controller-manager's ``--leader-elect*`` flags, with its defaults."""
    le = parser.add_argument_group("leader election")
    _bool_flag(
        le,
        "--leader-elect",
        default=True,
        dest="leader_elect",
        help="acquire a lease before running controllers (default true)",
    )
    _duration_flags(
        le,
        ("--leader-elect-lease-duration", 15.0, "how long others wait before taking over"),
        ("--leader-elect-renew-deadline", 10.0, "how long the leader retries renewing"),
        ("--leader-elect-retry-period", 2.0, "time between acquire and renew attempts"),
    )
    le.add_argument(
        "--leader-elect-resource-lock",
        choices=RESOURCE_LOCKS,
        default="leases",
        help="leases, or configmapsleases to migrate from a ConfigMap lock (default leases)",
    )
    le.add_argument(
        "--leader-elect-resource-name",
        default=KCM_LEASE,
        metavar="NAME",
        help=f"lock name (default {KCM_LEASE}: kcm's own, so it never takes over a running "
        "kube-controller-manager's lease; kube-controller-manager to replace it)",
    )
    _bool_flag(
        le,
        "--leader-elect-allow-fewer-controllers",
        default=False,
        dest="allow_fewer_controllers",
        help="take the kube-controller-manager lease although fewer controllers are enabled "
        "than kube-controller-manager runs by default (default false: a usage error naming them)",
    )
    le.add_argument(
        "--leader-elect-resource-namespace",
        default="kube-system",
        metavar="NS",
        help="lock namespace (default kube-system)",
    )


def _add_serving_flags(parser: argparse.ArgumentParser) -> None:
    """Where and how /healthz, /livez, /readyz and /metrics are served."""
    add_serving_flags(parser)


def _add_embedded_flags(parser: argparse.ArgumentParser) -> None:
    """The embedded API server kcm starts when it is given no cluster."""
    emb = parser.add_argument_group("embedded cluster (when there is no kubeconfig)")
    emb.add_argument(
        "--data-dir",
        metavar="DIR",
        help=f"API server state and kubeconfig (default {default_data_dir()})",
    )
    emb.add_argument(
        "--apiserver-port",
        type=port,
        default=0,
        metavar="PORT",
        help="embedded API server port on 127.0.0.1 (default 0: a free port; the kubeconfig "
        "is rewritten on every start)",
    )
    emb.add_argument(
        "--apiserver-insecure-http",
        action="store_true",
        help="serve the embedded API server over plain HTTP without authentication (anyone "
        "who can reach the port is an administrator; default: HTTPS with a CA kept in the "
        "data dir and an administrator's client certificate in the kubeconfig)",
    )
    add_admission_flags(emb)


def _add_simulation_flags(parser: argparse.ArgumentParser) -> None:
    """The simulated nodes, scheduler and kubelet (defaults from :class:`SimulationConfig`)."""
    sim = parser.add_argument_group(
        "simulation",
        "Ready nodes, a scheduler and a kubelet player, so workloads progress without real "
        "nodes. On by default in embedded mode only.",
    )
    _bool_flag(
        sim,
        "--simulate",
        default=None,
        dest="simulate",
        help="simulate nodes (default: true when embedded, false otherwise)",
    )
    sim.add_argument(
        "--no-simulation",
        action="store_const",
        const=False,
        dest="simulate",
        help="same as --simulate=false",
    )
    sim.add_argument(
        "--simulate-nodes",
        type=non_negative_int,
        default=_SIM.nodes,
        metavar="N",
        help=f"simulated nodes (default {_SIM.nodes})",
    )
    sim.add_argument(
        "--simulate-node-cpu",
        default=_SIM.node_cpu,
        metavar="QTY",
        help=f"CPU per node (default {_SIM.node_cpu})",
    )
    sim.add_argument(
        "--simulate-node-memory",
        default=_SIM.node_memory,
        metavar="QTY",
        help=f"memory per node (default {_SIM.node_memory})",
    )
    sim.add_argument(
        "--simulate-node-pods",
        type=positive_int,
        default=_SIM.node_pods,
        metavar="N",
        help=f"pods per node (default {_SIM.node_pods})",
    )
    _duration_flags(
        sim,
        ("--simulate-pod-start-delay", _SIM.pod_start_delay, "from bound to Running"),
        ("--simulate-pod-ready-delay", _SIM.pod_ready_delay, "from Running to Ready"),
        (
            "--simulate-job-duration",
            _SIM.job_duration,
            "how long pods with restartPolicy Never/OnFailure run (pod annotation "
            "kcm.dev/simulate-duration overrides; kcm.dev/simulate-exit-code sets the exit code)",
        ),
        ("--simulate-node-heartbeat", _SIM.heartbeat_period, "node Lease renewal period"),
    )


def _add_output_flags(parser: argparse.ArgumentParser) -> None:
    """Logging and the live status view."""
    log = parser.add_argument_group("output")
    log.add_argument(
        "-v",
        "--v",
        type=non_negative_int,
        default=0,
        metavar="LEVEL",
        dest="verbosity",
        help="klog verbosity: 0 errors, warnings and start-up, 2 steady-state info, 4 debug, "
        "6 requests (method, URL, code, latency), 7 their headers, 8 bodies (truncated), 9 "
        "whole bodies (default 0)",
    )
    log.add_argument(
        "--logging-format",
        choices=("text", "json"),
        default="text",
        help="text (klog's header) or json (component-base's keys) (default text)",
    )
    add_logging_flags(log)
    log.add_argument(
        "--status-view",
        choices=("auto", "on", "off"),
        default="auto",
        help="live summary instead of logs: auto = when stdout is a terminal (default auto)",
    )


def _setting_keys(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """Config-file key (a long flag without dashes, ``_`` read as ``-``) → its action."""
    keys: dict[str, argparse.Action] = {}
    for action in parser._actions:
        for option in action.option_strings:
            if option.startswith("--") and option not in ("--help", "--config"):
                keys[option[2:].replace("_", "-")] = action
    return keys


def _convert(action: argparse.Action, key: str, value: Any) -> Any:
    if action.dest == "controllers_flag":
        items = value if isinstance(value, list) else str(value).split(",")
        return [str(item).strip() for item in items if str(item).strip()]
    if action.dest == "feature_gates" and isinstance(value, dict):  # {Name: true} as YAML
        value = ",".join(f"{k}={str(v).lower()}" for k, v in value.items())
    if action.const is False and action.nargs == 0:  # --no-simulation: true turns it off
        return False if parse_bool(str(value)) else None
    if isinstance(value, list | dict) or value is None:
        raise argparse.ArgumentTypeError(f"{key}: expected a single value, got {value!r}")
    text = str(value).lower() if isinstance(value, bool) else str(value)
    converted = action.type(text) if callable(action.type) else text
    if action.choices is not None and converted not in action.choices:
        choices = ", ".join(map(str, action.choices))
        raise argparse.ArgumentTypeError(f"{key}: {value!r} is not one of {choices}")
    return converted


def load_config_file(parser: argparse.ArgumentParser, path: str) -> dict[str, Any]:
    """Read a YAML config file into parser defaults (``dest → value``).

    Raises:
        argparse.ArgumentTypeError: unreadable file, not a mapping, unknown key, bad value.
    """
    try:
        data = yaml.safe_load(Path(path).read_text())
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"cannot read --config {path}: {exc}") from exc
    except yaml.YAMLError as exc:
        mark, problem = getattr(exc, "problem_mark", None), getattr(exc, "problem", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise argparse.ArgumentTypeError(
            f"--config {path} is not valid YAML: {problem or exc}{where}"
        ) from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise argparse.ArgumentTypeError(
            f"--config {path} must be a mapping of settings (e.g. 'leader-elect: false')"
        )
    keys = _setting_keys(parser)
    defaults: dict[str, Any] = {}
    for raw_key, value in data.items():
        key = str(raw_key).lstrip("-").replace("_", "-")
        action = keys.get(key)
        if action is None:
            raise argparse.ArgumentTypeError(
                f"unknown setting {raw_key!r} in {path}; settings are the long flag names of "
                "`kcm run --help` without the dashes"
            )
        try:
            converted = _convert(action, key, value)
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentTypeError(f"{path}: {key}: {exc}") from exc
        dest = "controllers" if action.dest == "controllers_flag" else action.dest
        defaults[dest] = converted
    return defaults


def parse_run_args(argv: Sequence[str], *, prog: str = "kcm run") -> RunSettings:
    """Parse ``kcm run`` arguments (and ``--config``) into :class:`RunSettings`.

    Exits with status 2 and a usage message on any bad flag, value, config file or
    controller name (argparse's ``parser.error``).
    """
    return parse_settings(build_run_parser(prog), argv, _settings_from)


def parse_settings(
    parser: argparse.ArgumentParser,
    argv: Sequence[str],
    settings: Callable[[argparse.Namespace], RunSettings],
) -> RunSettings:
    """``argv`` through ``parser`` on top of the ``--config`` file's values, into settings.

    Exits with status 2 and a usage message (``parser.error``) on a bad config file, flag or
    value, or a ``ValueError`` from ``settings``.
    """
    pre = UsageErrorParser(prog=parser.prog, add_help=False, allow_abbrev=False)
    pre.add_argument("--config")
    known, _ = pre.parse_known_args(list(argv))
    if known.config:
        try:
            parser.set_defaults(**load_config_file(parser, known.config))
        except argparse.ArgumentTypeError as exc:
            parser.error(str(exc))
    args = parser.parse_args(_explicit_booleans(parser, argv))
    try:
        return settings(args)
    except ValueError as exc:
        parser.error(str(exc))


def _explicit_booleans(parser: argparse.ArgumentParser, argv: Sequence[str]) -> list[str]:
    """``argv`` with each bare boolean flag spelled ``--flag=true`` (pflag's rule: only
    ``--flag=value`` gives a boolean a value). ``--flag false`` is a usage error that says so,
    instead of kcm quietly running with the flag on."""
    names = {
        option
        for action in parser._actions
        if isinstance(action, _BoolAction)
        for option in action.option_strings
    }
    out: list[str] = []
    args = list(argv)
    for index, arg in enumerate(args):
        if arg == "--":
            out.extend(args[index:])
            break
        if arg not in names:
            out.append(arg)
            continue
        following = args[index + 1] if index + 1 < len(args) else None
        if following is not None and not following.startswith("-"):
            try:
                parse_bool(following)
            except argparse.ArgumentTypeError:
                pass
            else:
                parser.error(
                    f"unexpected argument {following!r} after {arg}: a boolean flag takes a "
                    f"value only with '=' ({arg}={following})"
                )
        out.append(f"{arg}=true")
    return out


def _check_lease_takeover(args: argparse.Namespace, enabled: list[str]) -> None:
    """Taking kube-controller-manager's lease replaces it: with fewer of its default
    controllers enabled, the cluster would silently lose some. A usage error unless
    ``--leader-elect-allow-fewer-controllers`` confirms it."""
    if not args.leader_elect or args.leader_elect_resource_name != KUBE_LEASE:
        return
    missing = sorted(KUBE_DEFAULT_CONTROLLERS - set(enabled))
    if missing and not args.allow_fewer_controllers:
        raise ValueError(
            f"--leader-elect-resource-name={KUBE_LEASE} takes over from kube-controller-manager, "
            f"but {len(missing)} of the controllers it runs by default would not run here "
            f"({', '.join(missing)}); enable them with --controllers, use kcm's own lease "
            f"(--leader-elect-resource-name={KCM_LEASE}), or confirm with "
            "--leader-elect-allow-fewer-controllers"
        )


def _settings_from(args: argparse.Namespace) -> RunSettings:
    enabled, workers, options = _controller_settings(args)
    _check_lease_takeover(args, enabled)
    return RunSettings(
        **_shared_settings(args),
        use_service_account_credentials=args.use_service_account_credentials,
        controllers=tuple(enabled),
        feature_gates=dict(args.feature_gates),
        workers=workers,
        controller_options=options,
        data_dir=Path(args.data_dir).expanduser() if args.data_dir else default_data_dir(),
        apiserver_port=args.apiserver_port,
        apiserver_insecure_http=args.apiserver_insecure_http,
        admission_plugins=admission_plugins_from(args),
        simulate=args.simulate,
        simulation=_simulation_from(
            args, assign_pod_cidrs=not ("nodeipam" in enabled and args.option_allocate_node_cidrs)
        ),
        ignored_flags=compatibility_flags_given(args),
    )


def _shared_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The :class:`RunSettings` fields of the flag groups ``kcm`` and ``kcm
    cloud-controller-manager`` both add (connection, cloud provider, leader election, serving,
    output), so that both commands read them alike.

    Raises:
        ValueError: inconsistent leader election durations (a usage error).
    """
    return {
        "kubeconfig": args.kubeconfig,
        "master": args.master,
        "kube_api_qps": args.kube_api_qps,
        "kube_api_burst": args.kube_api_burst,
        "cloud_provider": args.cloud_provider,
        "cloud_config": args.cloud_config,
        "cluster_name": args.cluster_name,
        "leader_elect": args.leader_elect,
        "leader_election": _leader_election_from(args),
        "resource_lock": args.leader_elect_resource_lock,
        "resource_name": args.leader_elect_resource_name,
        "resource_namespace": args.leader_elect_resource_namespace,
        "bind_address": args.bind_address,
        "secure_port": args.secure_port,
        "serving": serving_from(args),
        "verbosity": args.verbosity,
        "logging_format": args.logging_format,
        "status_view": args.status_view,
    }


def _controller_settings(
    args: argparse.Namespace,
) -> tuple[list[str], dict[str, int], dict[str, dict[str, Any]]]:
    """Enabled controller names, and each controller's workers and options by name."""
    enabled = enabled_controllers(_controller_selection(args))
    if not args.enable_garbage_collector and "garbagecollector" in enabled:
        enabled.remove("garbagecollector")
    workers, options = _tuning_from(args, CONTROLLERS)
    return enabled, workers, options


def _tuning_from(
    args: argparse.Namespace, specs: Mapping[str, ControllerSpec]
) -> tuple[dict[str, int], dict[str, dict[str, Any]]]:
    """Each of ``specs``' workers (its ``--concurrent-*-syncs`` flag, else its default) and
    options (its :class:`ControllerOption` flags), by controller name."""
    workers: dict[str, int] = {}
    options: dict[str, dict[str, Any]] = {}
    for name, spec in specs.items():
        workers[name] = (
            getattr(args, f"workers_{spec.package}")
            if spec.workers_flag is not None
            else spec.default_workers
        )
        options[name] = {o.kwarg: getattr(args, _option_dest(o.flag)) for o in spec.options}
    return workers, options


def _leader_election_from(args: argparse.Namespace) -> LeaderElectionConfig:
    """Raises ValueError (a usage error) when the three durations are inconsistent."""
    try:
        return LeaderElectionConfig(
            lease_duration=args.leader_elect_lease_duration,
            renew_deadline=args.leader_elect_renew_deadline,
            retry_period=args.leader_elect_retry_period,
            release_on_cancel=True,
            name=args.leader_elect_resource_name,
        )
    except ConfigError as exc:
        raise ValueError(f"leader election: {exc}") from exc


def _simulation_from(args: argparse.Namespace, *, assign_pod_cidrs: bool) -> SimulationConfig:
    """The simulation's settings; it leaves pod CIDRs to nodeipam when that allocates them."""
    return SimulationConfig(
        assign_pod_cidrs=assign_pod_cidrs,
        nodes=args.simulate_nodes,
        node_cpu=args.simulate_node_cpu,
        node_memory=args.simulate_node_memory,
        node_pods=args.simulate_node_pods,
        pod_start_delay=args.simulate_pod_start_delay,
        pod_ready_delay=args.simulate_pod_ready_delay,
        job_duration=args.simulate_job_duration,
        heartbeat_period=max(args.simulate_node_heartbeat, 0.1),
    )
