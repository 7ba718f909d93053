"""Every kube-controller-manager 1.24 flag is accepted by ``kcm run`` (kubeadm's manifest runs
unchanged); ``--feature-gates`` is parsed and checked against 1.24's gates."""

from __future__ import annotations

import inspect
import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kcm.cli import _run
from kcm.cli._flags import build_run_parser, parse_run_args
from kcm.cli._kube_flags import KUBE_FLAGS
from kcm.cli._run import _ControllerView, log_ignored_flags
from kcm.controllerkit import KNOWN_FEATURE_GATES, FeatureGates, feature_gates

ROOT = Path(__file__).resolve().parents[3]
BINARY = Path.home() / ".cache" / "real-kube" / "bin" / "kube-controller-manager"

# kubeadm's kube-controller-manager static pod command (cmd/kubeadm/app/phases/controlplane/
# manifests.go, getControllerManagerCommand, Kubernetes 1.24), with a pod subnet, a service
# subnet and a cluster name configured, as `kubeadm init --pod-network-cidr` writes it.
KUBEADM = [
    "--allocate-node-cidrs=true",
    "--authentication-kubeconfig=/etc/kubernetes/controller-manager.conf",
    "--authorization-kubeconfig=/etc/kubernetes/controller-manager.conf",
    "--bind-address=127.0.0.1",
    "--client-ca-file=/etc/kubernetes/pki/ca.crt",
    "--cluster-cidr=10.244.0.0/16",
    "--cluster-name=kubernetes",
    "--cluster-signing-cert-file=/etc/kubernetes/pki/ca.crt",
    "--cluster-signing-key-file=/etc/kubernetes/pki/ca.key",
    "--controllers=*,bootstrapsigner,tokencleaner",
    "--kubeconfig=/etc/kubernetes/controller-manager.conf",
    "--leader-elect=true",
    "--requestheader-client-ca-file=/etc/kubernetes/pki/front-proxy-ca.crt",
    "--root-ca-file=/etc/kubernetes/pki/ca.crt",
    "--service-account-private-key-file=/etc/kubernetes/pki/sa.key",
    "--service-cluster-ip-range=10.96.0.0/12",
    "--use-service-account-credentials=true",
]
SERVING = ("--authentication-", "--authorization-", "--client-ca-file", "--requestheader-")

# a valid value per Go type (strings kcm itself checks get their own below)
_BY_TYPE = {
    "bool": "true",
    "duration": "1m30s",
    "float": "1.5",
    "float32": "0.5",
    "int": "3",
    "int32": "3",
    "uint": "3",
    "ip": "127.0.0.1",
    "mapStringBool": "a=true",
    "stringToString": "a=b,c=d",
    "strings": "a,b",
    "Level": "2",
    "severity": "2",
    "quantity": "100",
    "pattern=N,...": "x=2",
    "traceLocation": "file.go:10",
    "namedCertKey": "a.crt,a.key",
}
_BY_NAME = {
    "cluster-cidr": "10.244.0.0/16",
    "service-cluster-ip-range": "10.96.0.0/12",
    "controllers": "*",
    "feature-gates": "AllAlpha=false",
    "leader-elect-resource-lock": "leases",
    "leader-elect-resource-name": "kcm",  # kube's own name: see test_cli_lease_safety
    "logging-format": "json",
    "secure-port": "10257",
    "node-cidr-mask-size": "24",
    "node-cidr-mask-size-ipv4": "24",
    "node-cidr-mask-size-ipv6": "64",
    "terminated-pod-gc-threshold": "100",
    "concurrent-gc-syncs": "20",
}


def _value(flag: dict[str, Any]) -> str:
    if flag["name"] in _BY_NAME:
        return _BY_NAME[flag["name"]]
    default = (flag["default"] or "").strip('"')
    if default and not default.startswith("["):  # Go's own default is valid for its type
        return default
    return _BY_TYPE.get(flag["type"], "x")


def test_the_flag_list_is_current_or_at_least_parses() -> None:
    assert len(KUBE_FLAGS) > 140
    assert {"use-service-account-credentials", "node-monitor-grace-period"} <= {
        f["name"] for f in KUBE_FLAGS
    }
    assert len(KNOWN_FEATURE_GATES) > 100
    if not BINARY.exists():
        return  # the real binary is not built here: the checked-in file parsing is enough
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate_kube_flags.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("flag", KUBE_FLAGS, ids=lambda f: f["name"])
def test_every_kube_controller_manager_flag_is_accepted(flag: dict[str, Any]) -> None:
    option = f"-{flag['short']}" if flag["short"] else f"--{flag['name']}"
    parse_run_args([f"{option}={_value(flag)}"])


def test_a_bad_value_of_a_no_op_flag_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        parse_run_args(["--min-resync-period=soon"])
    assert exc.value.code == 2
    assert "--min-resync-period" in capsys.readouterr().err


def test_no_op_flags_given_are_listed_once_and_others_not() -> None:
    settings = parse_run_args(
        ["--min-resync-period=12h", "--profiling=false", "--disabled-metrics=a", "--kube-api-qps=5"]
    )
    assert settings.ignored_flags == ("--disabled-metrics", "--min-resync-period", "--profiling")
    assert parse_run_args([]).ignored_flags == ()


def test_no_op_flags_from_the_config_file_count_too(tmp_path: Path) -> None:
    config = tmp_path / "kcm.yaml"
    config.write_text("min-resync-period: 12h\ncontroller-start-interval: 1s\n")
    settings = parse_run_args([f"--config={config}"])
    assert settings.ignored_flags == ("--controller-start-interval", "--min-resync-period")


def test_repeated_slice_and_map_flags_add_up() -> None:
    parser = build_run_parser()
    args = parser.parse_args(["--disabled-metrics=a,b", "--disabled-metrics=c"])
    assert args.compat_disabled_metrics == ["a", "b", "c"]
    settings = parse_run_args(["--feature-gates=AllAlpha=true", "--feature-gates=AllAlpha=false"])
    assert settings.feature_gates == {"AllAlpha": False}


def test_kubeadms_command_line_runs_unchanged() -> None:
    settings = parse_run_args(KUBEADM)
    assert settings.use_service_account_credentials is True
    assert {"bootstrapsigner", "tokencleaner"} <= set(settings.controllers)
    assert settings.kubeconfig == "/etc/kubernetes/controller-manager.conf"
    assert settings.bind_address == "127.0.0.1"
    # only the serving flags (HTTPS, delegated authn/authz) may still be no-ops here
    assert all(flag.startswith(SERVING) for flag in settings.ignored_flags)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            "Foo=true",
            'invalid argument "Foo=true" for "--feature-gates" flag: '
            "unrecognized feature gate: Foo",
        ),
        (
            "CSIMigration=maybe",
            "invalid value of CSIMigration=maybe, err: strconv.ParseBool: "
            'parsing "maybe": invalid syntax',
        ),
        ("CSIMigration", "missing bool value for CSIMigration"),
    ],
)
def test_feature_gates_are_checked_with_kubes_messages(
    value: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        parse_run_args([f"--feature-gates={value}"])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_feature_gates_follow_settings_then_all_alpha_beta_then_defaults() -> None:
    alpha = next(
        n for n, g in KNOWN_FEATURE_GATES.items() if g.stage == "ALPHA" and n != "AllAlpha"
    )
    beta_off = next(
        n for n, g in KNOWN_FEATURE_GATES.items() if g.stage == "BETA" and not g.default
    )
    beta_on = next(n for n, g in KNOWN_FEATURE_GATES.items() if g.stage == "BETA" and g.default)
    gates = FeatureGates()
    assert (gates.enabled(alpha), gates.enabled(beta_off), gates.enabled(beta_on)) == (
        False,
        False,
        True,
    )
    gates = FeatureGates({"AllAlpha": True, "AllBeta": True, beta_on: False})
    assert (gates.enabled(alpha), gates.enabled(beta_off), gates.enabled(beta_on)) == (
        True,
        True,
        False,
    )
    with pytest.raises(KeyError):
        gates.enabled("NoSuchGate")
    with pytest.raises(ValueError, match="unrecognized feature gate: NoSuchGate"):
        FeatureGates({"NoSuchGate": True})


def test_controllers_read_the_gates_through_their_manager() -> None:
    gates = FeatureGates({"AllAlpha": True})
    assert feature_gates(_ControllerView(object(), "client", gates)) is gates
    assert feature_gates(object()).settings == {}  # a plain manager: 1.24's defaults


def test_no_op_flags_are_logged_once_each_at_startup(caplog: pytest.LogCaptureFixture) -> None:
    settings = parse_run_args(["--min-resync-period=12h", "--profiling", "--min-resync-period=1h"])
    caplog.set_level(logging.INFO, logger="kcm.cli")
    log_ignored_flags(settings)
    lines = [r.getMessage() for r in caplog.records if "accepted for compatibility" in r.message]
    assert lines == [
        "flag --min-resync-period is accepted for compatibility and has no effect in kcm",
        "flag --profiling is accepted for compatibility and has no effect in kcm",
    ]
    assert "log_ignored_flags(settings)" in inspect.getsource(_run._serve)  # at startup


def test_the_recorded_flags_file_is_json_with_groups() -> None:
    data = json.loads((ROOT / "kcm/cli/_kube_controller_manager_flags.json").read_text())
    assert {f["group"] for f in data["flags"]} >= {"Generic", "Secure serving", "Logs"}


def test_feature_gates_in_the_config_file_take_a_mapping(tmp_path: Path) -> None:
    config = tmp_path / "kcm.yaml"
    config.write_text("feature-gates: {AllAlpha: true, CSIMigration: false}\n")
    settings = parse_run_args([f"--config={config}"])
    assert settings.feature_gates == {"AllAlpha": True, "CSIMigration": False}


def test_duration_defaults_read_in_help_as_kube_controller_manager_prints_them() -> None:
    """``--help`` shows a duration's default as Go's ``time.Duration`` does (``5s``, ``1m0s``),
    the same text as the real binary's help for every duration flag both have (pflag prints
    no default for a zero value; kcm prints ``0s``)."""
    go = {f["name"]: f["default"] or "0s" for f in KUBE_FLAGS if f["type"] == "duration"}
    parser = build_run_parser()
    compared = 0
    for action in parser._actions:
        names = [o[2:] for o in action.option_strings if o[2:] in go]
        if not names or action.help is None or "(default " not in action.help:
            continue
        shown = action.help.rsplit("(default ", 1)[1].rstrip(")")
        assert shown == go[names[0]], (names[0], shown, go[names[0]])
        compared += 1
    assert compared >= 10
