"""Waiting for the API server at start: one line per backoff step, then on."""

from __future__ import annotations

import logging
import subprocess
import sys
from typing import Any

import anyio
import httpx
import pytest

from kcm.cli._api_wait import wait_for_api_server
from kcm.testing import FakeClock

pytestmark = pytest.mark.anyio


class FlakyServer:
    """``/healthz`` that fails ``failures`` times (unreachable, then a 500), then answers."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0
        self.http = self

    async def get(self, path: str, **_: Any) -> httpx.Response:
        assert path == "/healthz"
        self.calls += 1
        if self.calls <= self.failures - 1:
            raise httpx.ConnectError("connection refused")
        if self.calls == self.failures:
            return httpx.Response(500, text="[-]etcd failed\nhealthz check failed")
        return httpx.Response(403)  # RBAC said no: the server is up


async def test_one_line_per_backoff_step_until_the_server_answers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="kcm.cli")
    clock, server = FakeClock(), FlakyServer(failures=4)
    failed: list[int] = []

    async def wait() -> None:
        failed.append(await wait_for_api_server(server, "https://k8s:6443", clock=clock))

    async with anyio.create_task_group() as tg:
        tg.start_soon(wait)
        for step in (1, 2, 4, 8):  # the backoff doubles from 1 s
            await clock.advance(step - 0.01)
            await clock.advance(0.01)
    assert failed == [4]
    lines = [r.getMessage() for r in caplog.records]
    assert (
        lines[:3]
        == [
            "waiting for API server at https://k8s:6443: ConnectError: connection refused; retrying"
        ]
        * 3
    )
    assert lines[3] == (
        "waiting for API server at https://k8s:6443: APIServer isn't healthy: 500 "
        "[-]etcd failed healthz check failed; retrying"
    )
    assert lines[4] == "API server at https://k8s:6443 is reachable"


def test_kcm_against_an_unreachable_master_says_so_at_once() -> None:
    """The issue's check: ``kcm --master http://127.0.0.1:1`` explains itself (it used to
    print nothing for 30 s): the first attempt, right after start-up, says why it waits."""
    with subprocess.Popen(
        [sys.executable, "-m", "kcm", "--master=http://127.0.0.1:1", "--secure-port=0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            assert proc.stderr is not None
            first = ""
            for line in proc.stderr:  # the start-up lines ("Skipping controller ..."), then
                if "waiting for API server" in line:
                    first = line
                    break
        finally:
            proc.kill()
    assert "] waiting for API server at http://127.0.0.1:1: ConnectError" in first, first
    assert first.startswith("W")
    assert first.rstrip().endswith("; retrying")


async def test_an_early_probe_says_it_first_and_the_wait_goes_on_from_there(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from kcm.cli._api_wait import probe_api_server

    caplog.set_level(logging.INFO, logger="kcm.cli")
    clock, server = FakeClock(), FlakyServer(failures=2)
    assert await probe_api_server(server, "https://k8s:6443")
    failed: list[int] = []

    async def wait() -> None:
        failed.append(
            await wait_for_api_server(server, "https://k8s:6443", clock=clock, failed_once=True)
        )

    async with anyio.create_task_group() as tg:
        tg.start_soon(wait)
        await clock.advance(1)  # the first step, slept before asking again: the 500
        assert server.calls == 2
        await clock.advance(2)
    assert (failed, server.calls) == ([2], 3)
    assert [r.getMessage().split(":")[-1] for r in caplog.records][:2] == [
        " connection refused; retrying",
        " 500 [-]etcd failed healthz check failed; retrying",
    ]
