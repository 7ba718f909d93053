"""storage-version-gc: which entries stay, the common encoding version and its condition,
and the feature gates it needs."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest

from kcm.controllerkit import FeatureGates
from kcm.controllers import ControllerDisabled, storageversiongc
from kcm.controllers.storageversiongc import add_to_manager, live_entries, with_entries
from kcm.models.internal_v1alpha1 import (
    ServerStorageVersion,
    StorageVersion,
    StorageVersionCondition,
    StorageVersionStatus,
)
from kcm.models.meta_v1 import ObjectMeta

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T1 = datetime(2026, 1, 2, tzinfo=UTC)


def version(*entries: tuple[str, str], condition: str | None = None) -> StorageVersion:
    conditions = (
        [
            StorageVersionCondition(
                type="AllEncodingVersionsEqual", status=condition, last_transition_time=T0
            )
        ]
        if condition
        else None
    )
    return StorageVersion(
        metadata=ObjectMeta(name="apps.deployments", generation=3),
        status=StorageVersionStatus(
            storage_versions=[
                ServerStorageVersion(api_server_id=s, encoding_version=e) for s, e in entries
            ],
            conditions=conditions,
        ),
    )


def test_entries_of_dead_servers_go() -> None:
    sv = version(("a", "apps/v1"), ("b", "apps/v1beta1"))
    assert live_entries(sv, lambda s: True) is None
    kept = live_entries(sv, lambda s: s == "a")
    assert [e.api_server_id for e in kept or ()] == ["a"]
    assert live_entries(sv, lambda s: False) == []


def test_the_common_encoding_version_and_its_condition() -> None:
    sv = version(("a", "apps/v1"), ("b", "apps/v1beta1"), condition="False")
    kept = live_entries(sv, lambda s: s == "a")
    assert kept is not None
    updated = with_entries(sv, kept, T1)
    assert updated.status is not None
    assert updated.status.common_encoding_version == "apps/v1"
    [condition] = updated.status.conditions or ()
    assert (condition.status, condition.reason, condition.message) == (
        "True",
        "CommonEncodingVersionSet",
        "Common encoding version set",
    )
    assert (condition.observed_generation, condition.last_transition_time) == (3, T1)
    again = with_entries(updated, kept, datetime(2026, 1, 3, tzinfo=UTC))
    assert again.status is not None
    assert (again.status.conditions or ())[0].last_transition_time == T1  # no transition


def test_disagreeing_entries_have_no_common_version() -> None:
    sv = version(("a", "apps/v1"), ("b", "apps/v1beta1"), ("c", "x"))
    kept = live_entries(sv, lambda s: s != "c")
    assert kept is not None
    updated = with_entries(sv, kept, T1)
    assert updated.status is not None
    assert updated.status.common_encoding_version is None
    assert [(c.status, c.reason) for c in updated.status.conditions or ()] == [
        ("False", "CommonEncodingVersionUnset")
    ]


def test_it_is_skipped_unless_both_gates_are_on(monkeypatch: pytest.MonkeyPatch) -> None:
    added: list[Any] = []
    manager: Any = SimpleNamespace(add=added.append)
    with pytest.raises(ControllerDisabled, match="APIServerIdentity and StorageVersionAPI are off"):
        add_to_manager(manager)
    manager.feature_gates = FeatureGates({"APIServerIdentity": True})
    with pytest.raises(ControllerDisabled, match="feature gate StorageVersionAPI is off"):
        add_to_manager(manager)
    assert added == []
    manager.feature_gates = FeatureGates({"AllAlpha": True})  # both are alpha in 1.24
    monkeypatch.setattr(
        storageversiongc, "add_controller", lambda m, name, build, **kw: added.append(build)
    )
    add_to_manager(manager)
    assert added == [storageversiongc.StorageVersionGC]
