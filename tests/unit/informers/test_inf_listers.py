"""Listers: typed get/list, selectors and namespaced views (S10)."""

from __future__ import annotations

import pytest

from kcm.errors import NotFound
from kcm.informers import Indexer, Lister
from kcm.models.core_v1 import ConfigMap
from kcm.selectors import LabelSelector
from tests.unit.informers.inf_fakes import cm, names


@pytest.fixture
def lister() -> Lister[ConfigMap]:
    idx: Indexer[ConfigMap] = Indexer()
    idx.add(cm("a", ns="x", labels={"app": "web", "tier": "front"}))
    idx.add(cm("b", ns="x", labels={"app": "db"}))
    idx.add(cm("c", ns="y", labels={"app": "web"}))
    idx.add(cm("n", ns=""))
    return Lister(idx, resource="configmaps")


def test_get_and_not_found(lister: Lister[ConfigMap]) -> None:
    assert lister.get("x", "a").metadata.name == "a"
    assert lister.get(None, "n").metadata.name == "n"
    assert lister.get_or_none("x", "zz") is None
    with pytest.raises(NotFound, match=r'configmaps "x/zz" not found'):
        lister.get("x", "zz")


def test_list_with_selectors(lister: Lister[ConfigMap]) -> None:
    assert names(lister.list()) == ["a", "b", "c", "n"]
    assert names(lister.list("")) == ["a", "b", "c", "n"]
    assert names(lister.list("app=web")) == ["a", "c"]
    assert names(lister.list("app in (web,db),tier!=front")) == ["b", "c"]
    assert names(lister.list(LabelSelector.parse("!app"))) == ["n"]
    assert names(lister.list({"app": "web", "tier": "front"})) == ["a"]


def test_namespace_lister(lister: Lister[ConfigMap]) -> None:
    x = lister.namespace("x")
    assert x.namespace == "x"
    assert names(x.list()) == ["a", "b"]
    assert names(x.list("app=web")) == ["a"]
    assert x.get("b").metadata.name == "b"
    assert x.get_or_none("c") is None
    with pytest.raises(NotFound):
        x.get("c")
    assert names(lister.namespace("empty").list()) == []


def test_cached_objects_are_immutable(lister: Lister[ConfigMap]) -> None:
    obj = lister.get("x", "a")
    with pytest.raises(AttributeError):
        obj.metadata.name = "other"  # type: ignore[misc]
    assert lister.get("x", "a").metadata.name == "a"


def test_strip_managed_fields_on_every_object_shape() -> None:
    from kcm.informers import strip_managed_fields
    from kcm.models import PartialObjectMetadata, Unstructured
    from kcm.models.meta_v1 import ManagedFieldsEntry, ObjectMeta

    meta = ObjectMeta(name="a", managed_fields=[ManagedFieldsEntry(manager="m")])
    partial = strip_managed_fields(PartialObjectMetadata(metadata=meta))
    assert partial.metadata.managed_fields is None
    assert partial.metadata.name == "a"
    raw = Unstructured.from_dict(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "a", "managedFields": [{"manager": "m"}]},
            "data": {"k": "v"},
        }
    )
    stripped = strip_managed_fields(raw)
    assert "managedFields" not in stripped["metadata"]
    assert stripped["data"] == {"k": "v"}
    assert "managedFields" in raw["metadata"]  # the original is untouched (immutable)
    assert strip_managed_fields(stripped) is stripped
