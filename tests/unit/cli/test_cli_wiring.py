"""How ``kcm run`` wires controllers: one client each, broken ones skipped, GC last."""

from __future__ import annotations

import contextlib
import logging
import sys
import types
from typing import Any

import pytest

import kcm.controllers as registry
from kcm.cli._run import _add_controllers, _ControllerView
from kcm.cli._settings import RunSettings
from kcm.client import ClientConfig
from kcm.controllers import ControllerSpec

pytestmark = pytest.mark.anyio


class FakeManager:
    registry = "the registry"

    def __init__(self) -> None:
        self.client = "the shared client"


def test_the_view_has_its_own_client_and_shares_the_rest() -> None:
    manager = FakeManager()
    view = _ControllerView(manager, "own client")
    assert view.client == "own client"
    assert view.registry == "the registry"
    assert manager.client == "the shared client"


async def test_each_controller_gets_its_own_client_and_broken_ones_are_skipped(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[tuple[str, Any, int]] = []

    def fake_package(name: str) -> types.ModuleType:
        module = types.ModuleType(f"kcm.controllers.{name}")

        def add_to_manager(manager: Any, *, workers: int = 1) -> None:
            seen.append((name, manager.client, workers))
            assert manager.registry == "the registry"

        module.add_to_manager = add_to_manager  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, f"kcm.controllers.{name}", module)
        return module

    fake_package("fake_a")
    fake_package("fake_gc")
    specs = {
        "garbagecollector": ControllerSpec("garbagecollector", "fake_gc", "h", None, 20),
        "alpha": ControllerSpec("alpha", "fake_a", "h", None, 5),
        "broken": ControllerSpec("broken", "no_such_package_here", "h", None, 1),
    }
    monkeypatch.setattr(registry, "CONTROLLERS", specs)
    settings = RunSettings(
        controllers=("garbagecollector", "alpha", "broken"), workers={"alpha": 7}
    )
    config = ClientConfig(server="http://127.0.0.1:9")
    async with contextlib.AsyncExitStack() as stack:
        with caplog.at_level(logging.ERROR, logger="kcm.cli"):
            failed = await _add_controllers(FakeManager(), settings, config, stack)
    assert failed == ["broken"]
    assert "Skipping controller broken" in caplog.text
    assert [name for name, _, _ in seen] == ["fake_a", "fake_gc"]  # the GC goes last
    clients = [client for _, client, _ in seen]
    assert clients[0] is not clients[1]
    agents = [c.config.user_agent for c in clients]
    assert agents[0].endswith("(alpha-controller)")
    assert agents[1].endswith("(garbagecollector-controller)")
    assert [w for _, _, w in seen] == [7, 20]
