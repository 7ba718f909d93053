"""The base install is the library; the server, controllers and command are extras.

A subprocess hides every optional module behind a meta-path finder (as if only the base
dependencies were installed) and imports the library layers; what needs an extra fails with
one line that names it.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from kcm._extras import DISTRIBUTION, EXTRAS, extra_of, require
from kcm.errors import KcmError, MissingExtra

ROOT = Path(__file__).resolve().parents[3]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
OPTIONAL = sorted({m for modules in EXTRAS.values() for m in modules} | {"tzdata", "yarl"})

_HIDE = f"""
import importlib.abc, sys
HIDDEN = {OPTIONAL!r}
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
for name in list(sys.modules):
    if name.split(".")[0] in HIDDEN:
        del sys.modules[name]
sys.meta_path.insert(0, Hide())
"""


def _run_hidden(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _HIDE + code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=60,
    )


def test_require_names_the_extra_in_one_line() -> None:
    with pytest.raises(MissingExtra) as info:
        require("kcm_no_such_module", extra="server", feature="the thing")
    message = str(info.value)
    assert message == (
        f"the thing needs kcm[server]: pip install '{DISTRIBUTION}[server]' "
        "(kcm_no_such_module is not installed)"
    )
    assert "\n" not in message
    assert isinstance(info.value, ImportError)
    assert isinstance(info.value, KcmError)
    assert (info.value.extra, info.value.module) == ("server", "kcm_no_such_module")


def test_require_returns_the_module() -> None:
    assert require("json", extra="server", feature="x").__name__ == "json"


def test_extra_of_prefers_the_narrowest_extra() -> None:
    assert extra_of("croniter") == "controllers"
    assert extra_of("cryptography.x509") == "controllers"
    assert extra_of("hypercorn.config") == "server"
    assert extra_of("rich.console") == "cli"
    assert extra_of("httpx") is None


def test_distribution_name_and_license() -> None:
    project = PYPROJECT["project"]
    assert project["name"] == DISTRIBUTION
    assert project["license"] == "Apache-2.0"
    assert project["scripts"] == {"kcm": "kcm.cli:main"}


def _top_modules(requirements: list[str]) -> set[str]:
    names = {"pyjwt": "jwt", "prometheus-client": "prometheus_client", "pyyaml": "yaml"}
    out = set()
    for requirement in requirements:
        dist = requirement.split("[")[0].split(">")[0].split("=")[0].strip().lower()
        out.add(names.get(dist, dist.replace("-", "_")))
    return out


def test_pyproject_extras_provide_the_modules_kcm_maps_to_them() -> None:
    extras = PYPROJECT["project"]["optional-dependencies"]
    for extra, modules in EXTRAS.items():
        assert set(modules) <= _top_modules(extras[extra]) | {"cryptography", "jwt"} or (
            extra == "cli" and set(modules) <= _top_modules(extras["cli"])
        ), extra
    base = _top_modules(PYPROJECT["project"]["dependencies"])
    assert not base & set(OPTIONAL), "an optional module is a base dependency"
    assert f"{DISTRIBUTION}[all]" in extras["test"]  # the tests get every extra


def test_the_library_layers_import_without_any_extra() -> None:
    result = _run_hidden(
        "import kcm.client, kcm.informers, kcm.workqueue, kcm.leaderelection, kcm.record, "
        "kcm.runtime, kcm.models, kcm.controllers, kcm.cli, kcm.controllerkit\n"
        # pytest loads kcm's plugin (the pytest11 entry point) in every project that has it
        "import kcm.testing.pytest_plugin\n"
        "from kcm.testing import FakeClock, eventually\n"
        "from kcm.client import ApiClient, ClientConfig\n"
        "from kcm.runtime import Manager\n"
        "print('ok')\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


_CSR = "_CSR = b'-----BEGIN CERTIFICATE REQUEST-----'\n"
_PRINT_ERROR = "except ImportError as exc:\n    print(type(exc).__name__, exc)\n"


@pytest.mark.parametrize(
    ("statement", "extra"),
    [
        ("import kcm.apiserver", "server"),
        ("from kcm.controllerkit import parse_certificate_request as p; p(_CSR)", "controllers"),
        ("from kcm.controllerkit import read_root_ca; read_root_ca('/dev/null')", "controllers"),
    ],
)
def test_what_needs_an_extra_says_which(statement: str, extra: str) -> None:
    result = _run_hidden(_CSR + f"try:\n    {statement}\n" + _PRINT_ERROR)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("MissingExtra ")
    assert f"needs kcm[{extra}]: pip install '{DISTRIBUTION}[{extra}]'" in result.stdout


def test_a_controller_that_needs_an_extra_says_which() -> None:
    result = _run_hidden(
        "from kcm.controllers import CONTROLLERS\n"
        "try:\n    CONTROLLERS['cronjob'].load()\n"
        "except ImportError as exc:\n    print(type(exc).__name__, exc)\n"
    )
    assert result.stdout.startswith("MissingExtra "), result.stderr
    assert "kcm[controllers]" in result.stdout


def test_the_command_without_its_extras_is_one_line_and_exit_1(tmp_path: Path) -> None:
    result = _run_hidden(
        "import sys\nfrom kcm.cli import main\n"
        f"sys.exit(main(['--data-dir', {str(tmp_path)!r}, '--secure-port=0']))\n"
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("kcm: error: ")
    assert "needs kcm[server]" in lines[0]


def test_kcm_apiserver_tls_without_the_server_extra_is_one_line() -> None:
    """The issue's case: ``kcm apiserver --tls`` on a plain install was a 36-line traceback."""
    result = _run_hidden(
        "import sys\nfrom kcm.cli import main\nsys.exit(main(['apiserver', '--tls']))\n"
    )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "kcm: error: the embedded API server (kcm.apiserver) needs kcm[server]: "
        f"pip install '{DISTRIBUTION}[server]' (hypercorn is not installed)"
    ]


def test_kcm_help_works_without_any_extra() -> None:
    result = _run_hidden("import sys\nfrom kcm.cli import main\nsys.exit(main(['--help']))\n")
    assert result.returncode == 0, result.stderr
    assert "--use-service-account-credentials" in result.stdout
