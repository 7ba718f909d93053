"""Indexer: keys, the namespace index, custom indices, queries and consistency (S2-S9)."""

from __future__ import annotations

import pytest

from kcm.informers import NAMESPACE_INDEX, Indexer
from kcm.models import ObjectKey
from kcm.models.core_v1 import ConfigMap
from tests.unit.informers.inf_fakes import cm, names


def by_team(obj: ConfigMap) -> list[str]:
    return (
        sorted((obj.metadata.labels or {}).get("teams", "").split(","))
        if (obj.metadata.labels or {}).get("teams")
        else []
    )


def test_add_get_update_delete_and_namespace_index() -> None:
    idx: Indexer[ConfigMap] = Indexer()
    a, b, c = cm("a", ns="x"), cm("b", ns="x"), cm("c", ns="y")
    for o in (a, b, c):
        assert idx.add(o) is None
    assert idx.get(ObjectKey("x", "a")) is a  # the same object, never a copy
    assert len(idx) == 3
    assert names(idx.by_index(NAMESPACE_INDEX, "x")) == ["a", "b"]
    a2 = cm("a", 2, ns="x")
    assert idx.update(a2) is a
    assert idx.get(ObjectKey("x", "a")) is a2
    assert idx.delete(ObjectKey("x", "a")) is a2
    assert idx.delete(ObjectKey("x", "a")) is None
    assert names(idx.by_index(NAMESPACE_INDEX, "x")) == ["b"]
    idx.delete(ObjectKey("x", "b"))
    # empty buckets are dropped (S4, B8).
    assert idx.list_index_func_values(NAMESPACE_INDEX) == ["y"]


def test_cluster_scoped_objects_use_empty_namespace() -> None:
    idx: Indexer[ConfigMap] = Indexer()
    idx.add(cm("node1", ns=""))
    assert idx.keys() == [ObjectKey("", "node1")]
    assert str(idx.keys()[0]) == "node1"
    assert names(idx.by_index(NAMESPACE_INDEX, "")) == ["node1"]


def test_custom_multi_value_index_queries() -> None:
    idx: Indexer[ConfigMap] = Indexer(indexers={"team": by_team})
    idx.add(cm("a", labels={"teams": "red,blue"}))
    idx.add(cm("b", labels={"teams": "blue"}))
    idx.add(cm("c"))
    assert names(idx.by_index("team", "blue")) == ["a", "b"]
    assert sorted(idx.index_keys("team", "red")) == [ObjectKey("default", "a")]
    # index(): objects sharing any value, each once.
    assert names(idx.index("team", cm("q", labels={"teams": "red,blue"}))) == ["a", "b"]
    assert sorted(idx.list_index_func_values("team")) == ["blue", "red"]
    # moving a value drops the old bucket
    idx.update(cm("a", 2, labels={"teams": "green"}))
    assert sorted(idx.list_index_func_values("team")) == ["blue", "green"]
    assert names(idx.by_index("team", "red")) == []
    assert idx.list_index_func_values("nope") == []
    with pytest.raises(KeyError, match="does not exist"):
        idx.by_index("nope", "x")


def test_add_indexers_backfills_and_rejects_conflicts() -> None:
    idx: Indexer[ConfigMap] = Indexer()
    idx.add(cm("a", labels={"teams": "red"}))
    idx.add_indexers({"team": by_team})
    assert names(idx.by_index("team", "red")) == ["a"]
    with pytest.raises(ValueError, match="indexer conflict"):
        idx.add_indexers({"team": by_team})
    with pytest.raises(ValueError, match="indexer conflict"):
        idx.add_indexers({NAMESPACE_INDEX: by_team})


def test_failing_index_function_leaves_store_unchanged() -> None:
    def bad(obj: ConfigMap) -> list[str]:
        if obj.metadata.name == "boom":
            raise RuntimeError("index failure")
        return ["v"]

    idx: Indexer[ConfigMap] = Indexer(indexers={"bad": bad})
    idx.add(cm("a"))
    with pytest.raises(RuntimeError):
        idx.add(cm("boom"))
    assert idx.keys() == [ObjectKey("default", "a")]
    assert idx.index_keys("bad", "v") == [ObjectKey("default", "a")]
    assert ObjectKey("default", "boom") not in idx
    with pytest.raises(RuntimeError):
        idx.replace([cm("x"), cm("boom")])
    assert idx.keys() == [ObjectKey("default", "a")]


def test_replace_swaps_content_and_rebuilds_indices() -> None:
    idx: Indexer[ConfigMap] = Indexer(indexers={"team": by_team})
    idx.add(cm("a", labels={"teams": "red"}))
    idx.replace([cm("b", 5, ns="z", labels={"teams": "blue"})])
    assert names(idx.list()) == ["b"]
    assert idx.list_index_func_values("team") == ["blue"]
    assert idx.list_index_func_values(NAMESPACE_INDEX) == ["z"]
    assert idx.by_index("team", "red") == []


def test_object_without_name_has_no_key() -> None:
    idx: Indexer[ConfigMap] = Indexer()
    with pytest.raises(ValueError, match=r"no metadata\.name"):
        idx.add(ConfigMap())
