"""Embedded mode is chosen exactly when there is no cluster to talk to."""

from __future__ import annotations

from pathlib import Path

import pytest

from kcm.cli._settings import RunSettings


@pytest.fixture
def settings(tmp_path: Path) -> RunSettings:
    return RunSettings(data_dir=tmp_path / "data")


def test_nothing_configured_means_embedded(settings: RunSettings) -> None:
    assert settings.embedded({}) is True
    assert settings.simulating(embedded=True) is True


@pytest.mark.parametrize(
    "environ",
    [
        {"KUBECONFIG": "/somewhere/else"},
        {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"},
    ],
)
def test_a_cluster_in_the_environment_means_not_embedded(
    settings: RunSettings, environ: dict[str, str]
) -> None:
    assert settings.embedded(environ) is False
    assert settings.simulating(embedded=False) is False


def test_flags_mean_not_embedded(tmp_path: Path) -> None:
    assert RunSettings(kubeconfig="k", data_dir=tmp_path).embedded({}) is False
    assert RunSettings(master="http://x", data_dir=tmp_path).embedded({}) is False


def test_the_exported_embedded_kubeconfig_still_means_embedded(settings: RunSettings) -> None:
    # A shell that followed kcm's own `export KUBECONFIG=...` advice restarts kcm embedded.
    assert settings.embedded({"KUBECONFIG": str(settings.kubeconfig_path)}) is True


def test_simulate_flag_overrides_the_mode(tmp_path: Path) -> None:
    on = RunSettings(simulate=True, data_dir=tmp_path)
    off = RunSettings(simulate=False, data_dir=tmp_path)
    assert on.simulating(embedded=False) is True
    assert off.simulating(embedded=True) is False
