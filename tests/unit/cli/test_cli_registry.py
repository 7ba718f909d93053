"""The controller registry: names, flags, lazy loading and ``--controllers`` resolution."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from kcm.controllers import CONTROLLERS, ControllerOption, ControllerSpec, enabled_controllers

KCM_NAMES = [
    "attachdetach",
    "bootstrapsigner",
    "cloud-node",
    "cloud-node-lifecycle",
    "clusterrole-aggregation",
    "cronjob",
    "csrapproving",
    "csrcleaner",
    "csrsigning",
    "daemonset",
    "deployment",
    "disruption",
    "endpoint",
    "endpointslice",
    "endpointslicemirroring",
    "ephemeral-volume",
    "garbagecollector",
    "horizontalpodautoscaling",
    "job",
    "namespace",
    "nodeipam",
    "nodelifecycle",
    "persistentvolume-binder",
    "persistentvolume-expander",
    "podgc",
    "pv-protection",
    "pvc-protection",
    "replicaset",
    "replicationcontroller",
    "resourcequota",
    "root-ca-cert-publisher",
    "route",
    "service",
    "serviceaccount",
    "serviceaccount-token",
    "statefulset",
    "storage-version-gc",
    "tokencleaner",
    "ttl",
    "ttl-after-finished",
]
OFF_BY_DEFAULT = ("bootstrapsigner", "tokencleaner")  # as in kube-controller-manager
ON_BY_DEFAULT = [n for n in KCM_NAMES if n not in OFF_BY_DEFAULT]


def test_registry_lists_the_first_set_with_kube_flags() -> None:
    assert list(CONTROLLERS) == KCM_NAMES
    flags = {name: spec.workers_flag for name, spec in CONTROLLERS.items()}
    assert flags["deployment"] == "--concurrent-deployment-syncs"
    assert flags["daemonset"] == "--concurrent-daemonset-syncs"
    assert flags["replicationcontroller"] == "--concurrent_rc_syncs"
    assert flags["garbagecollector"] == "--concurrent-gc-syncs"
    assert flags["podgc"] is None
    assert flags["clusterrole-aggregation"] is None  # kube runs five workers, no flag
    assert flags["serviceaccount-token"] == "--concurrent-serviceaccount-token-syncs"
    assert flags["serviceaccount"] is None  # kube runs one worker and has no flag
    assert flags["statefulset"] == "--concurrent-statefulset-syncs"
    assert flags["disruption"] is None  # kube runs one worker and has no flag
    assert flags["resourcequota"] == "--concurrent-resource-quota-syncs"
    assert flags["horizontalpodautoscaling"] is None  # kcm reconciles HPAs in one loop
    assert CONTROLLERS["ttl-after-finished"].module == "kcm.controllers.ttlafterfinished"
    assert all(spec.help and "\n" not in spec.help for spec in CONTROLLERS.values())


def test_reading_the_registry_imports_no_controller() -> None:
    code = (
        "import sys, kcm.controllers as c; list(c.CONTROLLERS); "
        "print(sorted(m for m in sys.modules if m.startswith('kcm.controllers.')))"
    )
    import subprocess

    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("selection", "expected"),
    [
        (["*"], ON_BY_DEFAULT),
        (["*", "bootstrapsigner"], sorted([*ON_BY_DEFAULT, "bootstrapsigner"])),
        (["tokencleaner"], ["tokencleaner"]),
        ([], []),
        (["deployment"], ["deployment"]),
        (["*", "-podgc", "-job"], [n for n in ON_BY_DEFAULT if n not in ("podgc", "job")]),
        (["-podgc", "podgc"], []),  # the first entry naming it wins; no '*'
        (["podgc", "-podgc", "*"], ON_BY_DEFAULT),
        ([" job ", ""], ["job"]),
    ],
)
def test_enabled_controllers(selection: list[str], expected: list[str]) -> None:
    assert enabled_controllers(selection) == expected


def test_unknown_names_are_all_reported() -> None:
    with pytest.raises(
        ValueError,
        match=r"unknown controllers 'nope', '-nada'.*known: attachdetach, bootstrapsigner, ",
    ):
        enabled_controllers(["*", "nope", "-nada"])


def test_off_by_default_controllers_need_their_name() -> None:
    spec = ControllerSpec("x", "x", "help", None, 1, enabled_by_default=False)
    registry: dict[str, ControllerSpec] = {"x": spec}
    import kcm.controllers as module

    original = module.CONTROLLERS
    module.CONTROLLERS = registry  # type: ignore[misc]
    try:
        assert enabled_controllers(["*"]) == []
        assert enabled_controllers(["*", "x"]) == ["x"]
    finally:
        module.CONTROLLERS = original  # type: ignore[misc]


def test_add_to_manager_passes_only_accepted_options(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, dict[str, Any]]] = []

    def add_to_manager(manager: Any, *, workers: int = 1, threshold: int = 0) -> None:
        calls.append((manager, {"workers": workers, "threshold": threshold}))

    fake = types.ModuleType("kcm.controllers.fakectl")
    fake.add_to_manager = add_to_manager  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "kcm.controllers.fakectl", fake)
    spec = ControllerSpec(
        "fake",
        "fakectl",
        "help",
        None,
        1,
        options=(ControllerOption("--threshold", "threshold", int, 0, "h"),),
    )
    ignored = spec.add_to_manager("mgr", workers=3, threshold=7, unknown=1)
    assert calls == [("mgr", {"workers": 3, "threshold": 7})]
    assert ignored == ["unknown"]


def test_a_missing_or_broken_controller_fails_alone_with_advice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = ControllerSpec("ghost", "no_such_controller_pkg", "help", None, 1)
    with pytest.raises(ImportError, match=r"controller 'ghost' cannot be loaded.*-ghost"):
        spec.load()
    monkeypatch.setitem(sys.modules, "kcm.controllers.hollow", types.ModuleType("hollow"))
    hollow = ControllerSpec("hollow", "hollow", "help", None, 1)
    with pytest.raises(ImportError, match="has no add_to_manager"):
        hollow.load()
