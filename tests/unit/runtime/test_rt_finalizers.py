"""Finalizer helpers against a recording fake ``Api``: no-ops send nothing."""

from __future__ import annotations

from typing import Any

import pytest

from kcm.models import Unstructured
from kcm.models.core_v1 import ConfigMap
from kcm.models.meta_v1 import ObjectMeta
from kcm.runtime import add_finalizer, has_finalizer, remove_finalizer

pytestmark = pytest.mark.anyio

F = "example.com/cleanup"


class RecordingApi:
    """Returns ``new`` from update() and remembers every (old, new) it was given."""

    def __init__(self) -> None:
        self.updates: list[tuple[Any, Any]] = []

    async def update(self, old: Any, new: Any) -> Any:
        self.updates.append((old, new))
        return new


def cm(*finalizers: str) -> ConfigMap:
    return ConfigMap(
        metadata=ObjectMeta(name="a", namespace="d", finalizers=list(finalizers) or None)
    )


def test_has_finalizer() -> None:
    assert has_finalizer(cm(F), F)
    assert not has_finalizer(cm("other"), F)
    assert not has_finalizer(cm(), F)


async def test_add_appends_and_keeps_others() -> None:
    api = RecordingApi()
    obj = cm("other")
    updated = await add_finalizer(api, obj, F)
    assert updated.metadata.finalizers == ["other", F]
    assert api.updates == [(obj, updated)]
    assert obj.metadata.finalizers == ["other"]  # the input is not changed


async def test_no_request_when_already_in_the_wanted_state() -> None:
    api = RecordingApi()
    has, hasnt = cm(F), cm()
    assert await add_finalizer(api, has, F) is has
    assert await remove_finalizer(api, hasnt, F) is hasnt
    assert api.updates == []


async def test_remove_drops_every_occurrence() -> None:
    api = RecordingApi()
    assert (await remove_finalizer(api, cm(F, "other", F), F)).metadata.finalizers == ["other"]
    assert (await remove_finalizer(api, cm(F), F)).metadata.finalizers is None


async def test_unstructured_objects() -> None:
    api = RecordingApi()
    obj = Unstructured.from_dict(
        {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w", "namespace": "d"},
            "spec": {"size": 3},
        }
    )
    added = await add_finalizer(api, obj, F)
    assert has_finalizer(added, F)
    assert not has_finalizer(obj, F)
    assert added["spec"] == {"size": 3}
    removed = await remove_finalizer(api, added, F)
    assert "finalizers" not in removed.to_dict()["metadata"]
    assert len(api.updates) == 2


async def test_other_objects_are_refused() -> None:
    class Plain:
        metadata = ObjectMeta(name="x")

    with pytest.raises(TypeError, match="typed model or Unstructured"):
        await add_finalizer(RecordingApi(), Plain(), F)
