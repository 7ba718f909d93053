"""``kcm run``'s exit status: 0 after a signal and a clean shutdown, 1 when the shutdown
outlives the manager's grace period (as controller-runtime's ``Start`` returns an error)."""

from __future__ import annotations

import logging
import signal
from typing import Any

import anyio
import pytest

import kcm.cli._run as cli_run
from kcm.apiserver import ApiServer
from kcm.cli._flags import parse_run_args
from kcm.client import ApiClient
from kcm.errors import GracefulShutdownTimeout
from kcm.models import ObjectKey
from kcm.runtime import Controller, Manager, Request, Result
from kcm.testing import FakeClock, client_config_for
from tests.helpers.fake_signals import FakeSignals


def _run_with(
    monkeypatch: pytest.MonkeyPatch, outcome: signal.Signals | BaseException | None
) -> int:
    """``cli_run.run`` with ``serve`` replaced by one that returns or raises ``outcome``."""

    async def fake_serve(settings: Any, **kwargs: Any) -> signal.Signals | None:
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    monkeypatch.setattr(cli_run, "serve", fake_serve)
    monkeypatch.setattr(cli_run, "configure_logging", lambda **kwargs: None)  # keep caplog's
    return cli_run.run(parse_run_args(["--status-view=off"]))


def test_a_clean_shutdown_after_sigterm_exits_0(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _run_with(monkeypatch, signal.SIGTERM) == 0


def test_a_shutdown_timeout_is_logged_and_exits_1(
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    error = GracefulShutdownTimeout(
        "manager: failed waiting for all runnables to end within grace period of 30 s",
        timeout=30.0,
        runnables=("Controller replicaset", "Controller job"),
        stages=("leader", "runnables"),
    )
    with caplog.at_level(logging.ERROR, "kcm.cli"):
        assert _run_with(monkeypatch, error) == 1
    records = [r for r in caplog.records if r.name == "kcm.cli" and r.levelno == logging.ERROR]
    assert len(records) == 1
    message = records[0].getMessage()
    assert message.startswith("kcm did not stop cleanly: the shutdown outlived its 30 s grace")
    assert "(Controller replicaset, Controller job)" in message
    assert "exiting with status 1" in message
    assert "within grace period of 30 s" in message
    assert "kcm: error" not in capsys.readouterr().err  # not taken for an OSError


class _Blocked:
    """A reconciler that never finishes on its own."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.entered = anyio.Event()

    async def reconcile(self, request: Request) -> Result:
        self.entered.set()
        await self.clock.sleep(100_000)
        return Result()


@pytest.mark.anyio
async def test_serving_raises_the_timeout_of_a_shutdown_after_sigterm(
    api_server: ApiServer,
) -> None:
    """The real path under ``run``: the signal starts the shutdown, the manager's deadline
    cancels the stuck reconcile, and the error comes out alone (not in an exception group)."""
    clock = FakeClock()
    reconciler = _Blocked(clock)
    signals = FakeSignals()
    async with ApiClient(client_config_for(api_server)) as client:
        manager = Manager(client, clock=clock, graceful_shutdown_timeout=10)
        controller = Controller("c", reconciler, clock=clock, graceful_shutdown_timeout=60)
        manager.add(controller)
        raised: list[BaseException] = []

        async def serve() -> None:
            try:
                await cli_run._run_manager(manager, None, signals)
            except BaseExceptionGroup as group:  # as serve() unwraps it
                raised.append(cli_run._single(group))
            except Exception as exc:
                raised.append(exc)

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(serve)
                try:
                    await manager.wait_elected()
                    controller.enqueue(ObjectKey("default", "web"))
                    await reconciler.entered.wait()
                    await signals.send.send(signal.SIGTERM)
                    await clock.advance(0)
                    await clock.advance(10)
                except BaseException:
                    manager.force_stop()  # a failed check must not hang on the fake clock
                    raise
        signals.send.close()
    assert len(raised) == 1
    assert isinstance(raised[0], GracefulShutdownTimeout)
    assert raised[0].runnables == ("Controller c",)


def test_an_unusable_private_key_stops_kcm_with_status_1(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli_run, "configure_logging", lambda **kwargs: None)
    settings = parse_run_args(
        [
            "--master=http://127.0.0.1:9",
            "--controllers=serviceaccount-token",
            f"--service-account-private-key-file={tmp_path / 'missing.key'}",
            "--leader-elect=false",
            "--secure-port=0",
            "--status-view=off",
        ]
    )
    assert cli_run.run(settings) == 1
    err = capsys.readouterr().err
    assert err.startswith("kcm: error: error reading key for service account token controller")
