"""The protobuf subset kubectl's typed commands send."""

from __future__ import annotations

import pytest

from kcm.apiserver._protobuf import UnsupportedProtobuf, decode_protobuf


def _varint(n: int) -> bytes:
    out = b""
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out += bytes([byte | 0x80])
        else:
            return out + bytes([byte])


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _entry(key: str, value: bytes) -> bytes:
    return _field(1, key.encode()) + _field(2, value)


def test_decodes_a_configmap_envelope() -> None:
    meta = _field(1, b"cfg") + _field(3, b"ns") + _field(11, _entry("app", b"web"))
    meta += _field(14, b"f1") + _field(14, b"f2")
    raw = _field(1, meta) + _field(2, _entry("k", b"v")) + _field(3, _entry("b", b"\x00\x01"))
    raw += _varint(4 << 3) + _varint(1)  # immutable: true
    unknown = _field(1, _field(1, b"v1") + _field(2, b"ConfigMap")) + _field(2, raw)
    obj = decode_protobuf(b"k8s\x00" + unknown)
    assert obj == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "cfg",
            "namespace": "ns",
            "labels": {"app": "web"},
            "finalizers": ["f1", "f2"],
        },
        "data": {"k": "v"},
        "binaryData": {"b": "AAE="},
        "immutable": True,
    }


def test_rejects_unknown_kinds_and_bodies() -> None:
    unknown = _field(1, _field(1, b"authorization.k8s.io/v1") + _field(2, b"SelfSubjectReview"))
    with pytest.raises(UnsupportedProtobuf, match="SelfSubjectReview"):
        decode_protobuf(b"k8s\x00" + unknown)
    with pytest.raises(UnsupportedProtobuf, match="envelope"):
        decode_protobuf(b"{}")


def test_zero_values_follow_go_pointer_rules() -> None:
    # DeploymentSpec: replicas (a pointer) keeps 0; minReadySeconds (not a pointer) drops 0
    spec = _varint(1 << 3) + _varint(0) + _varint(5 << 3) + _varint(0)
    raw = _field(1, _field(1, b"d")) + _field(2, spec)
    unknown = _field(1, _field(1, b"apps/v1") + _field(2, b"Deployment")) + _field(2, raw)
    obj = decode_protobuf(b"k8s\x00" + unknown)
    assert obj["spec"] == {"replicas": 0}
