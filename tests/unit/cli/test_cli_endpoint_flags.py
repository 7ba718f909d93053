"""The Endpoints, EndpointSlice and mirroring controllers' flags: kube-controller-manager's
names and defaults, Go durations for the batch periods."""

from __future__ import annotations

import pytest

from kcm.cli._flags import parse_run_args


def test_defaults() -> None:
    s = parse_run_args([])
    options = s.controller_options or {}
    assert options["endpoint"] == {"batch_period": 0.0}
    assert options["endpointslice"] == {"max_endpoints_per_slice": 100, "batch_period": 0.0}
    assert options["endpointslicemirroring"] == {
        "max_endpoints_per_subset": 1000,
        "batch_period": 0.0,
    }


def test_kube_flag_names_and_go_durations() -> None:
    s = parse_run_args(
        [
            "--concurrent-endpoint-syncs=2",
            "--concurrent-service-endpoint-syncs=3",
            "--mirroring-concurrent-service-endpoint-syncs=4",
            "--endpoint-updates-batch-period=1s",
            "--endpointslice-updates-batch-period=500ms",
            "--mirroring-endpointslice-updates-batch-period=1m30s",
            "--max-endpoints-per-slice=50",
            "--mirroring-max-endpoints-per-subset=10",
        ]
    )
    workers = s.workers or {}
    options = s.controller_options or {}
    assert (workers["endpoint"], workers["endpointslice"], workers["endpointslicemirroring"]) == (
        2,
        3,
        4,
    )
    assert options["endpoint"]["batch_period"] == 1.0
    assert options["endpointslice"] == {"max_endpoints_per_slice": 50, "batch_period": 0.5}
    assert options["endpointslicemirroring"] == {
        "max_endpoints_per_subset": 10,
        "batch_period": 90.0,
    }


@pytest.mark.parametrize("value", ["soon", "-1s", "1d"])
def test_a_bad_batch_period_is_a_usage_error(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        parse_run_args([f"--endpoint-updates-batch-period={value}"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "argument --endpoint-updates-batch-period: " in err
    assert "duration" in err


@pytest.mark.parametrize(
    "flag", ["--max-endpoints-per-slice=0", "--mirroring-max-endpoints-per-subset=1001"]
)
def test_endpoints_per_slice_is_1_to_1000(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        parse_run_args([flag])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag.split('=')[0]}: " in err
    assert "must be between 1 and 1000" in err
