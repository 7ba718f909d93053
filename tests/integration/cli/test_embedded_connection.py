"""How ``kcm`` connects to the embedded API server it starts: its own kubeconfig, no gzip."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from kcm.cli._flags import parse_run_args
from kcm.cli._run import _connect

pytestmark = pytest.mark.anyio


async def test_the_embedded_server_is_reached_without_compression(tmp_path: Path) -> None:
    settings = parse_run_args(
        ["--data-dir", str(tmp_path), "--kube-api-qps", "7", "--leader-elect=false"]
    )
    async with contextlib.AsyncExitStack() as stack:
        config, url = await _connect(
            settings, {}, io.StringIO(), embedded=True, simulate=False, stack=stack
        )
    assert config.server == url
    assert config.qps == 7
    assert config.disable_compression  # loopback to itself: gzip would only cost CPU
