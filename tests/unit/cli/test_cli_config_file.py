"""``--config file.yaml``: the same settings as the flags, and flags win."""

from __future__ import annotations

from pathlib import Path

import pytest

from kcm.cli._flags import parse_run_args


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "kcm.yaml"
    path.write_text(text)
    return str(path)


def test_file_settings_apply_with_yaml_types_and_flag_names(tmp_path: Path) -> None:
    config = write(
        tmp_path,
        """
kubeconfig: /etc/kcm/kubeconfig
leader-elect: false
leader-elect-lease-duration: 30s
leader-elect-renew-deadline: 20
controllers: ["*", "-podgc"]
concurrent-deployment-syncs: 9
concurrent_rc_syncs: 2
terminated-pod-gc-threshold: 100
secure-port: 0
v: 3
simulate-nodes: 7
no-simulation: true
""",
    )
    s = parse_run_args(["--config", config])
    assert s.kubeconfig == "/etc/kcm/kubeconfig"
    assert s.leader_elect is False
    assert (s.leader_election.lease_duration, s.leader_election.renew_deadline) == (30.0, 20.0)
    assert "podgc" not in s.controllers
    assert "deployment" in s.controllers
    assert s.workers is not None
    assert s.workers["deployment"] == 9
    assert s.workers["replicationcontroller"] == 2
    assert s.controller_options is not None
    assert s.controller_options["podgc"] == {"terminated_pod_threshold": 100}
    assert s.secure_port == 0
    assert s.verbosity == 3
    assert s.simulation.nodes == 7
    assert s.simulate is False


def test_flags_win_over_the_file(tmp_path: Path) -> None:
    config = write(
        tmp_path,
        "leader-elect: false\ncontrollers: deployment,job\nconcurrent-gc-syncs: 3\n",
    )
    s = parse_run_args(["--leader-elect=true", f"--config={config}", "--controllers=replicaset"])
    assert s.leader_elect is True
    assert s.controllers == ("replicaset",)  # replaced, not appended to the file's list
    assert s.workers is not None
    assert s.workers["garbagecollector"] == 3
    s = parse_run_args(["--config", config])
    assert s.controllers == ("deployment", "job")


def test_an_empty_file_changes_nothing(tmp_path: Path) -> None:
    assert parse_run_args(["--config", write(tmp_path, "")]) == parse_run_args([])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("leader-elekt: false\n", "unknown setting 'leader-elekt'"),
        ("leader-elect: perhaps\n", "leader-elect: 'perhaps' is not a boolean"),
        ("concurrent-gc-syncs: [1, 2]\n", "expected a single value"),
        ("- just\n- a list\n", "must be a mapping of settings"),
        ("controllers: [deployment, nope]\n", "unknown controller 'nope'"),
        ("leader-elect-resource-lock: endpoints\n", "'endpoints' is not one of leases"),
        ("a: [unclosed\n", "is not valid YAML"),
        ("a: [1\nb: 2\n", "is not valid YAML: expected ',' or ']', but got ':' at line 2"),
        ("leader-elect: 'yes\n", "is not valid YAML"),
    ],
)
def test_bad_files_fail_fast(
    tmp_path: Path, text: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        parse_run_args(["--config", write(tmp_path, text)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1, err  # one line, even for PyYAML's multi-line errors


def test_a_missing_file_fails_fast(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        parse_run_args(["--config", str(tmp_path / "nope.yaml")])
    assert exc.value.code == 2
    assert "cannot read --config" in capsys.readouterr().err
