"""The ``--horizontal-pod-autoscaler-*`` flags: Go durations, a non-negative tolerance."""

from __future__ import annotations

import pytest

from kcm.cli._flags import parse_run_args


def test_flags_take_go_durations() -> None:
    s = parse_run_args(
        [
            "--horizontal-pod-autoscaler-sync-period=1s",
            "--horizontal-pod-autoscaler-downscale-stabilization=30s",
            "--horizontal-pod-autoscaler-tolerance=0.05",
        ]
    )
    assert s.controller_options is not None
    options = s.controller_options["horizontalpodautoscaling"]
    assert (options["sync_period"], options["downscale_stabilization"]) == (1.0, 30.0)
    assert options["tolerance"] == 0.05


@pytest.mark.parametrize("value", ["-0.1", "lots"])
def test_a_bad_tolerance_is_refused(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_run_args([f"--horizontal-pod-autoscaler-tolerance={value}"])
    assert "--horizontal-pod-autoscaler-tolerance" in capsys.readouterr().err
