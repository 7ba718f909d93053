"""The data directory as another local user or a second server sees it: owner-only modes from
the first byte, and one server at a time."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest

from kcm.apiserver import ApiServer, DataDirLock, DataDirLocked

CMS = "/api/v1/namespaces/default/configmaps"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    """umask 0: what kcm creates must be private by its own choice, not the umask's."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.anyio
@pytest.mark.usefixtures("open_umask")
async def test_everything_in_a_new_data_dir_is_owner_only(tmp_path: Path) -> None:
    data = tmp_path / "a" / "data"
    async with ApiServer(data_dir=data) as server:
        async with httpx.AsyncClient(base_url=server.url) as http:
            r = await http.post(CMS, json={"metadata": {"name": "c"}, "data": {"k": "v"}})
            assert r.status_code == 201
        kubeconfig = server.write_kubeconfig(data / "kubeconfig")
        modes = _modes(data)
        assert _mode(data) == 0o700
        assert modes == _owner_only(data)
        assert {"kcm-apiserver.sqlite3", "kcm-apiserver.sqlite3-wal", "kcm.lock"} <= set(modes)
        assert _mode(kubeconfig) == 0o600


def _loosen(data: Path) -> Path:
    """What an older kcm left: everything readable by all (and a WAL and a kubeconfig)."""
    data.chmod(0o755)
    (data / "kcm-apiserver.sqlite3-wal").write_bytes(b"")
    kubeconfig = data / "kubeconfig"
    kubeconfig.write_text("old")
    for path in data.iterdir():
        path.chmod(0o755 if path.is_dir() else 0o644)
    return kubeconfig


def _owner_only(data: Path) -> dict[str, int]:
    """0600 files; 0700 directories (``pki/``, the CA and the token signing key)."""
    return {p.name: 0o700 if p.is_dir() else 0o600 for p in data.iterdir()}


def _modes(data: Path) -> dict[str, int]:
    return {p.name: _mode(p) for p in data.iterdir()}


@pytest.mark.anyio
@pytest.mark.usefixtures("open_umask")
async def test_loose_files_of_an_older_data_dir_are_tightened(tmp_path: Path) -> None:
    async with ApiServer(data_dir=tmp_path):
        pass
    kubeconfig = _loosen(tmp_path)
    async with ApiServer(data_dir=tmp_path) as server:
        server.write_kubeconfig(kubeconfig)
        assert _modes(tmp_path) == _owner_only(tmp_path)
        assert "current-context: kcm" in kubeconfig.read_text()
    assert _mode(tmp_path) == 0o755  # an existing directory keeps its mode (a warning says so)


def test_a_second_holder_in_this_process_is_refused_with_our_pid(tmp_path: Path) -> None:
    with DataDirLock(tmp_path):
        with pytest.raises(DataDirLocked) as refused:
            DataDirLock(tmp_path)
        assert refused.value.pid == os.getpid()
        assert str(tmp_path) in str(refused.value)
        with pytest.raises(DataDirLocked):
            ApiServer(data_dir=tmp_path)
    with DataDirLock(tmp_path):  # released: the next one gets it
        pass


@pytest.mark.anyio
async def test_a_second_kcm_apiserver_process_on_one_data_dir_exits_naming_the_holder(
    tmp_path: Path,
) -> None:
    async with ApiServer(data_dir=tmp_path) as server:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        with anyio.fail_after(60):
            result = await anyio.run_process(
                [
                    sys.executable,
                    "-m",
                    "kcm",
                    "apiserver",
                    "--data-dir",
                    str(tmp_path),
                    "--port",
                    "0",
                ],
                check=False,
                env=env,
            )
        assert result.returncode == 1
        err = result.stderr.decode()
        assert f"the data directory {tmp_path} is in use by process {os.getpid()}" in err
        async with httpx.AsyncClient(base_url=server.url) as http:  # the first one is unharmed
            assert (await http.get("/readyz")).status_code == 200
