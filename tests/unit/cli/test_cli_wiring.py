"""How ``kcm run`` wires controllers: one client each, broken ones skipped, by start order
(serviceaccount-token first, GC last)."""

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
    fake_package("fake_tokens")
    specs = {
        "garbagecollector": ControllerSpec(
            "garbagecollector", "fake_gc", "h", None, 20, start_order=1
        ),
        "alpha": ControllerSpec("alpha", "fake_a", "h", None, 5),
        "broken": ControllerSpec("broken", "no_such_package_here", "h", None, 1),
        "tokens": ControllerSpec("tokens", "fake_tokens", "h", None, 5, start_order=-1),
    }
    monkeypatch.setattr(registry, "CONTROLLERS", specs)
    settings = RunSettings(
        controllers=("garbagecollector", "alpha", "broken", "tokens"), workers={"alpha": 7}
    )
    config = ClientConfig(server="http://127.0.0.1:9")
    async with contextlib.AsyncExitStack() as stack:
        with caplog.at_level(logging.ERROR, logger="kcm.cli"):
            failed = await _add_controllers(FakeManager(), settings, config, stack)
    assert failed == ["broken"]
    assert "Skipping controller broken" in caplog.text
    # the token controller goes first (as kube's StartControllers), the GC last
    assert [name for name, _, _ in seen] == ["fake_tokens", "fake_a", "fake_gc"]
    clients = [client for _, client, _ in seen]
    assert len({id(c) for c in clients}) == 3
    agents = [c.config.user_agent for c in clients]
    assert agents[1].endswith("(alpha-controller)")
    assert agents[2].endswith("(garbagecollector-controller)")
    assert [w for _, _, w in seen] == [5, 7, 20]


async def test_a_disabled_controller_is_skipped_with_a_warning_and_config_errors_stop_kcm(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from kcm.controllers import ControllerDisabled
    from kcm.errors import ConfigError

    def package(name: str, error: Exception) -> None:
        module = types.ModuleType(f"kcm.controllers.{name}")

        def add_to_manager(manager: Any, *, workers: int = 1) -> None:
            raise error

        module.add_to_manager = add_to_manager  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, f"kcm.controllers.{name}", module)

    package("fake_off", ControllerDisabled('"off" is disabled because there is no private key'))
    package("fake_bad", ConfigError("error reading key"))
    specs = {
        "off": ControllerSpec("off", "fake_off", "h", None, 1),
        "bad": ControllerSpec("bad", "fake_bad", "h", None, 1),
    }
    monkeypatch.setattr(registry, "CONTROLLERS", specs)
    config = ClientConfig(server="http://127.0.0.1:9")
    async with contextlib.AsyncExitStack() as stack:
        with caplog.at_level(logging.WARNING, logger="kcm.cli"):
            skipped = await _add_controllers(
                FakeManager(), RunSettings(controllers=("off",)), config, stack
            )
        assert skipped == ["off"]
        [record] = [r for r in caplog.records if "Skipping controller off" in r.getMessage()]
        assert record.levelno == logging.WARNING
        assert "no private key" in record.getMessage()
        with pytest.raises(ConfigError, match="error reading key"):
            await _add_controllers(FakeManager(), RunSettings(controllers=("bad",)), config, stack)
