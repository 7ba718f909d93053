"""The commands' event loop: uvloop when installed, unless KCM_EVENT_LOOP=asyncio."""

from __future__ import annotations

import asyncio
import importlib.util
from typing import Any

import pytest

from kcm.cli import _event_loop
from kcm.cli._event_loop import run_event_loop, uses_uvloop


def _installed(monkeypatch: pytest.MonkeyPatch, present: bool) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        if name == "uvloop":
            return object() if present else None
        return real(name, *args)

    monkeypatch.setattr(_event_loop.importlib.util, "find_spec", find_spec)


def test_uvloop_is_used_when_installed_unless_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KCM_EVENT_LOOP", raising=False)
    _installed(monkeypatch, True)
    assert uses_uvloop()
    monkeypatch.setenv("KCM_EVENT_LOOP", "asyncio")
    assert not uses_uvloop()
    monkeypatch.delenv("KCM_EVENT_LOOP")
    _installed(monkeypatch, False)
    assert not uses_uvloop()


def test_run_event_loop_runs_on_asyncio(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KCM_EVENT_LOOP", "asyncio")

    async def main() -> str:
        return type(asyncio.get_running_loop()).__module__

    assert run_event_loop(main).startswith("asyncio")


@pytest.mark.skipif(importlib.util.find_spec("uvloop") is None, reason="uvloop is not installed")
def test_run_event_loop_runs_on_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KCM_EVENT_LOOP", raising=False)

    async def main() -> str:
        return type(asyncio.get_running_loop()).__module__

    assert run_event_loop(main).startswith("uvloop")
