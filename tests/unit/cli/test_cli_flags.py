"""``kcm run`` flags: kube-controller-manager's names, defaults and value forms."""

from __future__ import annotations

from pathlib import Path

import pytest

from kcm.cli._flags import default_data_dir, parse_run_args
from kcm.controllers import CONTROLLERS


def usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exc:
        parse_run_args(argv)
    assert exc.value.code == 2
    return capsys.readouterr().err


def test_the_embedded_server_is_secure_unless_told_otherwise() -> None:
    assert parse_run_args([]).apiserver_insecure_http is False
    assert parse_run_args(["--apiserver-insecure-http"]).apiserver_insecure_http is True


def test_defaults_follow_kube_controller_manager() -> None:
    s = parse_run_args([])
    # '*': every controller that is on by default (kube's bootstrapsigner, tokencleaner are not)
    assert s.controllers == tuple(n for n, c in CONTROLLERS.items() if c.enabled_by_default)
    assert s.workers == {
        "attachdetach": 1,
        "cloud-node": 1,
        "cloud-node-lifecycle": 1,
        "bootstrapsigner": 1,
        "clusterrole-aggregation": 5,
        "cronjob": 5,
        "csrapproving": 5,
        "csrcleaner": 1,
        "csrsigning": 5,
        "daemonset": 2,
        "deployment": 5,
        "disruption": 1,
        "endpoint": 5,
        "endpointslice": 5,
        "endpointslicemirroring": 5,
        "ephemeral-volume": 5,
        "garbagecollector": 20,
        "horizontalpodautoscaling": 1,
        "job": 5,
        "namespace": 10,
        "nodeipam": 1,
        "nodelifecycle": 1,
        "persistentvolume-binder": 1,
        "persistentvolume-expander": 10,
        "podgc": 1,
        "pv-protection": 1,
        "pvc-protection": 1,
        "replicaset": 5,
        "replicationcontroller": 5,
        "resourcequota": 5,
        "root-ca-cert-publisher": 1,
        "route": 1,
        "service": 1,
        "serviceaccount": 1,
        "serviceaccount-token": 5,
        "statefulset": 5,
        "ttl": 5,
        "storage-version-gc": 1,
        "tokencleaner": 1,
        "ttl-after-finished": 5,
    }
    assert s.controller_options is not None
    assert s.controller_options["podgc"] == {"terminated_pod_threshold": 12500}
    assert s.controller_options["horizontalpodautoscaling"] == {
        "sync_period": 15.0,
        "downscale_stabilization": 300.0,
        "tolerance": 0.1,
        "cpu_initialization_period": 300.0,
        "initial_readiness_delay": 30.0,
    }
    assert s.controller_options["serviceaccount-token"] == {
        "service_account_private_key_file": None,
        "root_ca_file": None,
    }
    assert s.leader_elect is True
    le = s.leader_election
    assert (le.lease_duration, le.renew_deadline, le.retry_period) == (15.0, 10.0, 2.0)
    assert le.release_on_cancel is True
    assert (s.resource_lock, s.resource_name, s.resource_namespace) == (
        "leases",
        "kcm",  # kcm's own lease, never kube-controller-manager's unless asked (lease safety)
        "kube-system",
    )
    assert (s.bind_address, s.secure_port) == (None, 10257)  # None: by mode (below)
    assert s.health_bind_address(embedded=False) == "0.0.0.0"  # kube's default
    assert s.health_bind_address(embedded=True) == "127.0.0.1"  # a laptop: loopback only
    assert (s.kube_api_qps, s.kube_api_burst) == (20.0, 30)
    assert s.simulate is None
    assert s.simulation.nodes == 3
    assert s.verbosity == 0
    assert s.data_dir == default_data_dir()


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--leader-elect=false"], False),
        (["--leader-elect=False"], False),
        (["--leader-elect=0"], False),
        (["--leader-elect"], True),
        (["--leader-elect=true"], True),
    ],
)
def test_boolean_forms(argv: list[str], expected: bool) -> None:
    assert parse_run_args(argv).leader_elect is expected


def test_key_value_and_separate_value_forms() -> None:
    a = parse_run_args(["--concurrent-deployment-syncs=7", "--kube-api-qps", "50"])
    b = parse_run_args(["--concurrent-deployment-syncs", "7", "--kube-api-qps=50"])
    assert a.workers == b.workers
    assert a.workers is not None
    assert a.workers["deployment"] == 7
    assert a.kube_api_qps == b.kube_api_qps == 50.0


def test_rc_flag_keeps_its_underscores_and_accepts_dashes() -> None:
    assert (parse_run_args(["--concurrent_rc_syncs=2"]).workers or {})["replicationcontroller"] == 2
    assert (parse_run_args(["--concurrent-rc-syncs=3"]).workers or {})["replicationcontroller"] == 3


def test_durations_take_go_syntax() -> None:
    s = parse_run_args(
        [
            "--leader-elect-lease-duration=1m",
            "--leader-elect-renew-deadline=30s",
            "--leader-elect-retry-period=1500ms",
            "--simulate-job-duration=1m30s",
        ]
    )
    le = s.leader_election
    assert (le.lease_duration, le.renew_deadline, le.retry_period) == (60.0, 30.0, 1.5)
    assert s.simulation.job_duration == 90.0


def test_service_account_flags_and_one_root_ca_file_for_two_controllers() -> None:
    s = parse_run_args(
        [
            "--service-account-private-key-file=/etc/k/sa.key",
            "--root-ca-file",
            "/etc/k/ca.crt",
            "--concurrent-serviceaccount-token-syncs=2",
        ]
    )
    assert s.controller_options is not None
    assert s.workers is not None
    assert s.controller_options["serviceaccount-token"] == {
        "service_account_private_key_file": "/etc/k/sa.key",
        "root_ca_file": "/etc/k/ca.crt",
    }
    assert s.controller_options["root-ca-cert-publisher"] == {"root_ca_file": "/etc/k/ca.crt"}
    assert s.workers["serviceaccount-token"] == 2


def test_verbosity_forms() -> None:
    assert parse_run_args(["-v=4"]).verbosity == 4
    assert parse_run_args(["-v", "2"]).verbosity == 2
    assert parse_run_args(["--v=6"]).verbosity == 6


ON = [n for n, spec in CONTROLLERS.items() if spec.enabled_by_default]


@pytest.mark.parametrize(
    ("selection", "enabled"),
    [
        (["--controllers=*,-podgc"], [n for n in ON if n != "podgc"]),
        (["--controllers=*,bootstrapsigner"], [n for n in CONTROLLERS if n != "tokencleaner"]),
        (["--controllers=deployment,replicaset"], ["deployment", "replicaset"]),
        (["--controllers=deployment", "--controllers=job"], ["deployment", "job"]),
        (["--controllers=-job,job,*"], [n for n in ON if n != "job"]),  # first wins
        (
            ["--controllers=*", "--enable-garbage-collector=false"],
            [n for n in ON if n != "garbagecollector"],
        ),
    ],
)
def test_controller_selection(selection: list[str], enabled: list[str]) -> None:
    assert list(parse_run_args(selection).controllers) == sorted(enabled)


def test_unknown_controller_fails_fast_with_the_known_names(
    capsys: pytest.CaptureFixture[str],
) -> None:
    err = usage_error(["--controllers=*,-deploymnet"], capsys)
    assert "unknown controller '-deploymnet'" in err
    assert (
        "known: attachdetach, bootstrapsigner, cloud-node, cloud-node-lifecycle, "
        "clusterrole-aggregation, cronjob, csrapproving, csrcleaner" in err
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--no-such-flag"], "unrecognized arguments: --no-such-flag"),
        (["--leader-elect=maybe"], "'maybe' is not a boolean"),
        (["--concurrent-gc-syncs=0"], "must be at least 1"),
        (["--secure-port=-1"], "-1 is too small: a port is 0-65535"),
        (["--leader-elect-lease-duration=soon"], "is not a duration"),
        (["--leader-elect-resource-lock=endpoints"], "invalid choice: 'endpoints'"),
        (["--leader-elect-lease-duration=5s"], "lease_duration (5.0 s) must be greater"),
        (["--simulate-node-cpu=lots"], "node_cpu 'lots' is not a quantity"),
        (["--leader"], "unrecognized arguments: --leader"),  # no abbreviations
        (["extra"], "unrecognized arguments: extra"),
        (["--secure-port=99999"], "99999 is too large: a port is 0-65535"),
        (["--secure-port", "65536"], "65536 is too large: a port is 0-65535"),
        (["--apiserver-port=70000"], "70000 is too large: a port is 0-65535"),
        (["--apiserver-port=-1"], "a port is 0-65535"),
        (["--bind-address=notanip"], "'notanip' is not an IP address"),
        (["--bind-address=256.1.1.1"], "'256.1.1.1' is not an IP address"),
        # pflag: a boolean takes a value only with '='; what follows a space is an argument
        (["--leader-elect", "false"], "a boolean flag takes a value only with '='"),
        (["--simulate", "no"], "(--simulate=no)"),
        (["--leader-elect", "web"], "unrecognized arguments: web"),
    ],
)
def test_bad_flags_fail_fast_with_a_clear_message(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert message in usage_error(argv, capsys)


@pytest.mark.parametrize(
    "argv", [["--no-such-flag"], ["--secure-port=99999"], ["--leader-elect", "false"], ["x"]]
)
def test_a_usage_error_is_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    err = usage_error(argv, capsys)
    assert err.count("\n") == 1, err
    assert err.startswith("kcm run: error: ")
    assert err.endswith("; see kcm run --help\n")
    assert "usage:" not in err


def test_ports_and_addresses_in_range() -> None:
    s = parse_run_args(["--secure-port=65535", "--apiserver-port=0", "--bind-address=::1"])
    assert (s.secure_port, s.apiserver_port, s.bind_address) == (65535, 0, "::1")
    s = parse_run_args(["--bind-address", "0.0.0.0"])
    assert s.health_bind_address(embedded=True) == "0.0.0.0"  # given: kept in either mode


def test_a_bare_boolean_never_takes_the_next_argument() -> None:
    s = parse_run_args(["--leader-elect", "--secure-port=0"])
    assert (s.leader_elect, s.secure_port) == (True, 0)
    s = parse_run_args(["--simulate", "--leader-elect=false"])
    assert (s.simulate, s.leader_elect) == (True, False)


def test_simulation_flags() -> None:
    s = parse_run_args(
        [
            "--simulate-nodes=5",
            "--simulate-node-cpu=16",
            "--simulate-node-memory=64Gi",
            "--simulate-node-pods=250",
            "--simulate-pod-start-delay=200ms",
            "--simulate-pod-ready-delay=0",
            "--simulate-node-heartbeat=5s",
        ]
    )
    sim = s.simulation
    assert (sim.nodes, sim.node_cpu, sim.node_memory, sim.node_pods) == (5, "16", "64Gi", 250)
    assert (sim.pod_start_delay, sim.pod_ready_delay, sim.heartbeat_period) == (0.2, 0.0, 5.0)
    assert parse_run_args(["--no-simulation"]).simulate is False
    assert parse_run_args(["--simulate"]).simulate is True
    assert parse_run_args(["--simulate=false"]).simulate is False


def test_data_dir_defaults_to_the_users_data_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert parse_run_args([]).data_dir == tmp_path / "kcm"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert parse_run_args([]).data_dir == tmp_path / ".local" / "share" / "kcm"
    assert parse_run_args(["--data-dir", str(tmp_path / "x")]).data_dir == tmp_path / "x"
