"""Models are frozen: no attribute can be set; replace() makes changed copies."""

from __future__ import annotations

import msgspec
import pytest

from kcm.models import Container, Deployment, K8sStruct, ObjectMeta, Pod, PodSpec, encode


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
