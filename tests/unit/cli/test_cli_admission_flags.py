"""``--enable-admission-plugins`` / ``--disable-admission-plugins`` on ``kcm apiserver`` and the
embedded server of ``kcm run``: kube's names and order, a clear error for an unknown one."""

from __future__ import annotations

import pytest

from kcm.cli import main
from kcm.cli._flags import parse_run_args


def test_run_without_the_flags_keeps_the_server_defaults() -> None:
    assert parse_run_args([]).admission_plugins is None


def test_run_flags_choose_plugins_in_kube_order() -> None:
    settings = parse_run_args(
        [
            "--disable-admission-plugins=ResourceQuota",
            "--disable-admission-plugins",
            "LimitRanger,PodSecurity",
        ]
    )
    assert settings.admission_plugins == (
        "NamespaceLifecycle",
        "ServiceAccount",
        "Priority",
        "DefaultTolerationSeconds",
        "DefaultStorageClass",
        "StorageObjectInUseProtection",
        "PersistentVolumeClaimResize",
    )


def test_run_refuses_an_unknown_plugin(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        parse_run_args(["--enable-admission-plugins=NoSuchPlugin"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "enable-admission-plugins plugin 'NoSuchPlugin' is unknown; known plugins:" in err
    assert "ResourceQuota" in err


def test_apiserver_refuses_an_unimplemented_plugin(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["apiserver", "--enable-admission-plugins=PodSecurity"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        "kcm apiserver: error: enable-admission-plugins plugin 'PodSecurity' is not "
        "implemented by kcm; it implements: NamespaceLifecycle, LimitRanger,"
    )
