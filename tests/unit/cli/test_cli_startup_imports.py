"""Against a cluster kcm does not import the embedded API server (~0.3 s of start-up CPU):
``run`` still reports the server's ``DataDirLocked`` as one line once embedded mode loaded it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kcm.apiserver import DataDirLocked
from kcm.cli._run import _reported_errors
from kcm.errors import ConfigError


def test_the_run_path_does_not_import_the_api_server() -> None:
    code = (
        "import sys, kcm.cli._main, kcm.cli._flags, kcm.cli._run, kcm.controllers\n"
        "print(sorted(m for m in sys.modules if m.startswith('kcm.apiserver')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_data_dir_locked_is_reported_once_the_server_is_imported() -> None:
    assert _reported_errors() == (ConfigError, OSError, DataDirLocked)


def test_before_the_server_is_imported_nothing_can_raise_data_dir_locked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "kcm.apiserver")
    assert _reported_errors() == (ConfigError, OSError)
