"""Each package's ``add_to_manager`` records events under kube-controller-manager's component
name for that controller (``add_controller``'s ``event_source``, or ``<name>-controller``)."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

SOURCES = {
    "disruption": ("DisruptionController", {"recorder": "controllermanager"}),
    "endpointslice": ("EndpointSliceController", {"recorder": "endpoint-slice-controller"}),
    "endpointslicemirroring": (
        "EndpointSliceMirroringController",
        {"recorder": "endpoint-slice-mirroring-controller"},
    ),
    "ephemeralvolume": ("EphemeralVolumeController", {"recorder": "ephemeral_volume"}),
    "expand": ("ExpandController", {"recorder": "volume_expand"}),
    "horizontalpodautoscaling": ("HorizontalController", {"recorder": "horizontal-pod-autoscaler"}),
    "nodelifecycle": (
        "NodeLifecycleController",
        {"recorder": "node-controller", "taint_recorder": "taint-controller"},
    ),
    "persistentvolume": ("PersistentVolumeBinder", {"recorder": "persistentvolume-controller"}),
    "replicaset": ("ReplicaSetController", {"recorder": "replicaset-controller"}),
}


class _FakeManager:
    client = "client"
    factory = "factory"
    clock = "clock"
    registry = "registry"

    def __init__(self) -> None:
        self.added: list[Any] = []

    def event_recorder(self, component: str) -> str:
        return f"recorder:{component}"

    def add(self, runnable: Any) -> None:
        self.added.append(runnable)


@pytest.mark.parametrize("package", sorted(SOURCES))
def test_add_to_manager_uses_kubes_event_source(
    package: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = importlib.import_module(f"kcm.controllers.{package}")
    class_name, recorders = SOURCES[package]
    built: list[dict[str, Any]] = []

    def build(client: Any, factory: Any, **kwargs: Any) -> str:
        assert (client, factory) == ("client", "factory")
        built.append(kwargs)
        return "controller"

    monkeypatch.setattr(module, class_name, build)
    manager = _FakeManager()
    module.add_to_manager(manager, workers=3)
    assert manager.added == ["controller"]
    (kwargs,) = built
    assert (kwargs["clock"], kwargs["workers"], kwargs["registry"]) == ("clock", 3, "registry")
    for argument, component in recorders.items():
        assert kwargs[argument] == f"recorder:{component}"
