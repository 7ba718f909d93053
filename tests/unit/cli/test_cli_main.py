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


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (["--controllers=*,-nope"], "kcm: error: unknown controller '-nope'"),
        (["run", "--leader-elect=maybe"], "kcm run: error: argument --leader-elect"),
    ],
)
def test_console_script_fails_fast_on_bad_input(argv: list[str], reason: str) -> None:
    """As a process: exit code 2, a one-line reason, nothing started (nothing on stdout)."""
    out = subprocess.run(
        [sys.executable, "-m", "kcm", *argv], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 2
    assert reason in out.stderr
    assert out.stderr.count("\n") == 1
    assert out.stdout == ""


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["--secure-port=99999"],
            "kcm: error: argument --secure-port: 99999 is too large: a port is 0-65535; "
            "see kcm --help",
        ),
        (
            ["--bind-address=notanip", "--data-dir=/nonexistent/kcm"],
            "kcm: error: argument --bind-address: 'notanip' is not an IP address "
            "(e.g. 127.0.0.1, 0.0.0.0 or ::); see kcm --help",
        ),
        (
            ["--leader-elect", "false"],
            "kcm: error: unexpected argument 'false' after --leader-elect: a boolean flag takes "
            "a value only with '=' (--leader-elect=false); see kcm --help",
        ),
        (
            ["apiserver", "--host=notanip"],
            "kcm apiserver: error: argument --host: 'notanip' is not an IP address "
            "(e.g. 127.0.0.1, 0.0.0.0 or ::); see kcm apiserver --help",
        ),
        (
            ["apiserver", "--port=70000"],
            "kcm apiserver: error: argument --port: 70000 is too large: a port is 0-65535; "
            "see kcm apiserver --help",
        ),
    ],
)
def test_usage_errors_are_one_line_before_anything_starts(argv: list[str], line: str) -> None:
    """As a process: exit 2 with exactly one line, no usage dump, no traceback, and no
    embedded server started first (it would print its banner on stdout)."""
    out = subprocess.run(
        [sys.executable, "-m", "kcm", *argv], capture_output=True, text=True, timeout=60
    )
    assert (out.returncode, out.stdout, out.stderr) == (2, "", line + "\n")


def test_unknown_command_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["no-such-command"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("kcm: error: argument command: invalid choice")
    assert err.endswith("; see kcm --help\n")


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
