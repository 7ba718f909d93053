"""Models are frozen: no attribute can be set, decoded arrays and maps cannot change;
replace() makes changed copies."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from types import ModuleType

import msgspec
import pytest

from kcm.models import (
    ConfigMap,
    Container,
    Deployment,
    FrozenDict,
    FrozenMap,
    JSONSchemaProps,
    K8sStruct,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodSpec,
    Secret,
    decode,
    encode,
    to_dict,
)


def test_setting_a_field_raises() -> None:
    pod = Pod(metadata=ObjectMeta(name="a"), spec=PodSpec(containers=[Container(name="c")]))
    with pytest.raises(AttributeError):
        pod.metadata = ObjectMeta(name="b")  # type: ignore[misc]
    with pytest.raises(AttributeError):
        pod.metadata.name = "b"  # type: ignore[misc]
    assert pod.spec is not None
    with pytest.raises(AttributeError):
        pod.spec.node_name = "n"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del pod.metadata  # type: ignore[misc]


def test_replace_returns_a_changed_copy() -> None:
    dep = Deployment(metadata=ObjectMeta(name="web", labels={"a": "1"}))
    moved = msgspec.structs.replace(
        dep, metadata=msgspec.structs.replace(dep.metadata, namespace="shop")
    )
    assert dep.metadata.namespace is None
    assert moved.metadata.namespace == "shop"
    assert moved.metadata.labels == {"a": "1"}
    assert b'"namespace":"shop"' in encode(moved)


def test_every_model_is_frozen_and_gc_free() -> None:
    import importlib
    import pkgutil

    import kcm.models

    checked = 0
    for info in pkgutil.iter_modules(kcm.models.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"kcm.models.{info.name}")
        for name in module.__all__:
            value = getattr(module, name)
            if not isinstance(value, type) or not issubclass(value, K8sStruct):
                continue
            config = value.__struct_config__
            assert config.frozen, name
            assert not config.gc, name
            assert config.omit_defaults, name
            checked += 1
    assert checked > 700


def test_decoded_objects_are_read_only_all_the_way_down(corpus: ModuleType) -> None:
    """What an informer caches cannot be changed in place: arrays are tuples, maps FrozenMaps,
    free-form JSON read-only views (client-go needs a mutation detector for this)."""
    pod = decode(Pod, json.dumps(corpus.make_pod(3)))
    assert pod.spec is not None
    assert pod.spec.containers
    meta = pod.metadata
    assert isinstance(meta.labels, FrozenMap)
    assert isinstance(meta.annotations, FrozenMap)
    assert isinstance(pod.spec.containers, tuple)
    assert isinstance(meta.owner_references, tuple)
    writes: list[Callable[[], object]] = [
        lambda: meta.labels.__setitem__("x", "y"),  # type: ignore[union-attr]
        lambda: meta.labels.update(x="y"),  # type: ignore[union-attr]
        lambda: meta.labels.pop("app"),  # type: ignore[union-attr]
        lambda: meta.labels.setdefault("x", "y"),  # type: ignore[union-attr]
        lambda: meta.labels.clear(),  # type: ignore[union-attr]
        lambda: meta.labels.popitem(),  # type: ignore[union-attr]
        lambda: meta.annotations.__delitem__("prometheus.io/port"),  # type: ignore[union-attr]
    ]
    for write in writes:
        with pytest.raises(TypeError, match="read-only"):
            write()
    labels = meta.labels
    with pytest.raises(TypeError, match="read-only"):
        labels |= {"x": "y"}  # type: ignore[operator]
    with pytest.raises(AttributeError):
        pod.spec.containers.append(pod.spec.containers[0])  # type: ignore[attr-defined]
    limits = pod.spec.containers[0].resources.limits  # type: ignore[union-attr]
    with pytest.raises(TypeError):
        limits["cpu"] = "9"  # type: ignore[index]
    assert decode(Pod, json.dumps(corpus.make_pod(3))) == pod  # nothing changed


def test_frozen_maps_read_and_copy_like_dicts() -> None:
    meta = decode(ObjectMeta, b'{"labels":{"app":"web","tier":"fe"}}')
    labels = meta.labels
    assert labels == {"app": "web", "tier": "fe"}
    assert labels["app"] == "web"
    assert labels.get("nope") is None
    assert "tier" in labels
    assert len(labels) == 2
    for mutable in (dict(labels), labels.copy(), labels | {"x": "1"}):
        mutable["x"] = "2"  # mutable copies; the original is untouched
    assert copy.copy(labels) is labels
    deep = copy.deepcopy(labels)
    assert isinstance(deep, FrozenMap)
    assert deep == labels
    assert "x" not in labels
    assert pickle.loads(pickle.dumps(meta)) == meta
    assert repr(labels) == "FrozenMap({'app': 'web', 'tier': 'fe'})"
    assert encode(meta) == b'{"labels":{"app":"web","tier":"fe"}}'


def test_map_values_keep_their_types() -> None:
    secret = decode(Secret, b'{"metadata":{"name":"s"},"data":{"k":"aGVsbG8="}}')
    assert secret.data == {"k": b"hello"}
    assert isinstance(secret.data, FrozenMap)
    crd_schema = decode(
        JSONSchemaProps,
        b'{"properties":{"spec":{"type":"object","required":["a"]}},"default":{"a":[1]}}',
    )
    assert crd_schema.properties is not None
    spec = crd_schema.properties["spec"]
    assert isinstance(spec, JSONSchemaProps)
    assert spec.required == ("a",)
    default = crd_schema.default
    assert isinstance(default, FrozenDict)
    assert default == {"a": [1]}
    with pytest.raises(TypeError):
        default["a"] = 2
    with pytest.raises(AttributeError):
        default["a"].append(2)
    assert b'"default":{"a":[1]}' in encode(crd_schema)


def test_objects_you_build_may_use_lists_and_dicts() -> None:
    """Construction stays ergonomic: a model built with lists equals the same model decoded
    (the status-unchanged check of every controller depends on it)."""
    built = Pod(
        metadata=ObjectMeta(name="a", finalizers=["f"], labels={"app": "web"}),
        spec=PodSpec(containers=[Container(name="c", args=["x", "y"])]),
    )
    decoded = decode(Pod, encode(built))
    assert decoded.metadata.finalizers == ("f",)
    assert built == decoded
    assert decoded == built
    assert (built != decoded) is False
    assert to_dict(built) == to_dict(decoded)
    other = msgspec.structs.replace(built, spec=PodSpec(containers=[Container(name="c")]))
    assert other != decoded
    assert decoded != other
    assert built != ConfigMap(metadata=built.metadata)  # another kind is never equal
    ref = decode(OwnerReference, b'{"apiVersion":"v1","kind":"Pod","name":"a","uid":"u"}')
    assert len({ref, decode(OwnerReference, encode(ref))}) == 1  # hashable when all fields are
