"""``kcm``'s command dispatch and help (replaces tests/test_cli_help.py: ``kcm`` alone now
starts the controller manager, so its help is ``kcm --help``)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kcm.cli import main
from kcm.controllers import CONTROLLERS


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["-h"]])
def test_help_lists_every_controller_with_one_line(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: kcm")
    for name, spec in CONTROLLERS.items():
        assert f"  {name}" in out
        assert spec.help in out
        if spec.workers_flag:
            assert spec.workers_flag in out
    for flag in ("--kubeconfig", "--master", "--leader-elect-resource-lock", "--secure-port"):
        assert flag in out
    assert "plain HTTP" in out
    assert "kcm apiserver" in out


def test_unknown_command_fails_with_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["no-such-command"])
    assert exc.value.code == 2
    assert "invalid choice: 'no-such-command'" in capsys.readouterr().err


def test_apiserver_command_is_still_there(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["apiserver", "--help"])
    assert exc.value.code == 0
    assert "--kubeconfig-out" in capsys.readouterr().out


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith("kcm ")


def test_console_script_fails_fast_on_bad_input() -> None:
    """As a process: exit code 2, a one-line reason, nothing started."""
    out = subprocess.run(
        [sys.executable, "-m", "kcm", "--controllers=*,-nope"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert "kcm: error: unknown controller '-nope'" in out.stderr
    out = subprocess.run(
        [sys.executable, "-m", "kcm", "run", "--leader-elect=maybe"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert "kcm run: error: argument --leader-elect" in out.stderr


def test_a_broken_kubeconfig_is_an_error_not_a_traceback(tmp_path: object) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "kcm", "--kubeconfig=/nonexistent/kubeconfig", "--secure-port=0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1
    assert out.stderr.startswith("kcm: error: kubeconfig file not found")
    assert "Traceback" not in out.stderr
