"""Unstructured: immutable, keeps every field, works with the wire helpers."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from kcm.models import ObjectList, Unstructured, WatchEvent, decode, decoder, encode, to_dict
from kcm.models.meta_v1 import ObjectMeta

WIDGET: dict[str, Any] = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "metadata": {
        "name": "w",
        "namespace": "shop",
        "labels": {"a": "b"},
        "creationTimestamp": "2024-05-01T10:00:00Z",
    },
    "spec": {"size": 3, "parts": [{"name": "x", "tags": ["t"]}], "nested": {"deep": {"k": 1}}},
    "status": {"phase": "Ready"},
}


def test_fields_and_metadata() -> None:
    obj = Unstructured.from_dict(WIDGET)
    assert obj.api_version == "example.com/v1"
    assert obj.kind == "Widget"
    assert obj.metadata.name == "w"
    assert obj.metadata.namespace == "shop"
    assert obj.metadata.creation_timestamp is not None
    assert obj["spec"]["size"] == 3
    assert obj["spec"]["parts"][0]["tags"][0] == "t"
    assert obj.get("missing") is None
    assert "status" in obj
    assert obj["spec"] == WIDGET["spec"]
    assert set(obj) == set(WIDGET)


def test_mutation_is_impossible() -> None:
    obj = Unstructured.from_dict(WIDGET)
    spec = obj["spec"]
    with pytest.raises(TypeError):
        obj["spec"] = {}  # type: ignore[index]
    with pytest.raises(TypeError):
        spec["size"] = 4
    with pytest.raises(TypeError):
        spec["nested"]["deep"]["k"] = 2
    with pytest.raises((TypeError, AttributeError)):
        spec["parts"].append({})
    with pytest.raises(TypeError):
        spec["parts"][0] = {}
    with pytest.raises(TypeError):
        obj.kind = "Other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        obj._data = {}
    with pytest.raises(TypeError):
        spec._data = {}
    with pytest.raises(AttributeError):
        obj.metadata.name = "x"  # type: ignore[misc]
    assert obj.to_dict() == WIDGET


def test_input_and_output_dicts_are_copies() -> None:
    source = json.loads(json.dumps(WIDGET))
    obj = Unstructured.from_dict(source)
    source["spec"]["size"] = 99
    assert obj["spec"]["size"] == 3
    out = obj.to_dict()
    out["spec"]["nested"]["deep"]["k"] = 5
    out["spec"]["parts"].append({})
    assert obj["spec"]["nested"]["deep"]["k"] == 1
    assert len(obj["spec"]["parts"]) == 1
    assert obj["spec"].to_dict() == WIDGET["spec"]


def test_wire_helpers_keep_every_field() -> None:
    obj = decode(Unstructured, json.dumps(WIDGET))
    assert isinstance(obj, Unstructured)
    assert json.loads(encode(obj)) == WIDGET
    assert to_dict(obj) == WIDGET
    event = decoder(WatchEvent[Unstructured]).decode(
        json.dumps({"type": "ADDED", "object": WIDGET})
    )
    assert isinstance(event.object, Unstructured)
    assert event.object.metadata.name == "w"
    listed = decode(ObjectList[Unstructured], json.dumps({"items": [WIDGET, WIDGET]}))
    assert [i.kind for i in listed.items] == ["Widget", "Widget"]
    assert json.loads(encode(listed))["items"] == [WIDGET, WIDGET]


def test_equality_and_repr() -> None:
    a = Unstructured.from_dict(WIDGET)
    b = Unstructured(WIDGET)
    assert a == b
    assert a != Unstructured.from_dict(dict(WIDGET, status={}))
    assert "Widget" in repr(a)
    assert "shop/w" in repr(a)
    with pytest.raises(TypeError):
        hash(a)
    with pytest.raises(TypeError):
        Unstructured([1, 2])  # type: ignore[arg-type]


FULL_METADATA: dict[str, Any] = {
    "name": "w",
    "namespace": "shop",
    "uid": "u-1",
    "resourceVersion": "42",
    "generation": 3,
    "creationTimestamp": "2024-05-01T10:00:00Z",
    "deletionTimestamp": "2024-05-02T10:00:00Z",
    "deletionGracePeriodSeconds": 30,
    "labels": {"a": "b"},
    "annotations": {"note": "n"},
    "finalizers": ["example.com/f"],
    "ownerReferences": [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": "d",
            "uid": "u-0",
            "controller": True,
        }
    ],
    "managedFields": [
        {
            "manager": "kubectl",
            "operation": "Apply",
            "apiVersion": "example.com/v1",
            "time": "2024-05-01T10:00:00Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:size": {}}, "f:metadata": {"f:labels": {"f:a": {}}}},
        },
        {"manager": "controller", "operation": "Update", "subresource": "status"},
    ],
}


def test_metadata_equals_decoding_its_json() -> None:
    # .metadata is converted from the dict, not re-encoded and decoded: same result, field for
    # field, including fieldsV1's raw JSON bytes and the read-only containers.
    obj = Unstructured.from_dict(dict(WIDGET, metadata=FULL_METADATA))
    expected = decode(ObjectMeta, msgspec.json.encode(FULL_METADATA))  # the old path
    meta = obj.metadata
    assert meta == expected  # fieldsV1 included: msgspec.Raw compares its bytes
    assert meta is obj.metadata  # converted once
    assert decode(Unstructured, encode(obj)).metadata == expected
    assert json.loads(encode(meta)) == FULL_METADATA
    assert type(meta.labels) is type(expected.labels)
    assert type(meta.finalizers) is type(expected.finalizers)
    with pytest.raises(TypeError):
        meta.labels["a"] = "c"  # type: ignore[index]
    assert obj["metadata"]["labels"] == {"a": "b"}


def test_metadata_of_the_wrong_shape_raises_validation_error() -> None:
    assert Unstructured({"kind": "W"}).metadata == ObjectMeta()
    with pytest.raises(msgspec.ValidationError, match="generation"):
        _ = Unstructured({"kind": "W", "metadata": {"generation": "three"}}).metadata
    with pytest.raises(msgspec.ValidationError):
        _ = Unstructured({"kind": "W", "metadata": "w"}).metadata
