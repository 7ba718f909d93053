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


def _varint_field(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value & (2**64 - 1))


def _envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = _field(1, api_version.encode()) + _field(2, kind.encode())
    return b"k8s\x00" + _field(1, type_meta) + _field(2, raw)


def test_an_ingress_with_inline_rule_values_and_optional_pointers() -> None:
    """IngressRule's ``http`` lives in an inline struct; ingressClassName is a pointer."""
    port = _varint_field(2, 8080)
    service = _field(1, b"svc") + _field(2, port)
    path = _field(1, b"/bar") + _field(2, _field(4, service)) + _field(3, b"Prefix")
    rule = _field(1, b"foo.example.com") + _field(2, _field(1, _field(1, path)))
    spec = _field(3, rule) + _field(4, b"nginx")
    meta = _field(1, b"ing") + _field(8, b"")  # a zero creationTimestamp, as Go writes it
    obj = decode_protobuf(
        _envelope(
            "networking.k8s.io/v1",
            "Ingress",
            _field(1, meta) + _field(2, spec) + _field(3, _field(1, b"")),
        )
    )
    assert obj["metadata"] == {"name": "ing", "creationTimestamp": None}
    assert obj["spec"] == {
        "rules": [
            {
                "host": "foo.example.com",
                "http": {
                    "paths": [
                        {
                            "path": "/bar",
                            "pathType": "Prefix",
                            "backend": {"service": {"name": "svc", "port": {"number": 8080}}},
                        }
                    ]
                },
            }
        ],
        "ingressClassName": "nginx",
    }
    assert obj["status"] == {"loadBalancer": {}}  # Go's JSON keeps empty structs


def test_quantities_int_or_strings_times_and_durations() -> None:
    quantity = _field(1, b"2")
    hard = _field(1, _entry("requests.cpu", quantity))
    quota = decode_protobuf(_envelope("v1", "ResourceQuota", _field(2, hard)))
    assert quota["spec"] == {"hard": {"requests.cpu": "2"}}

    int_or_string = _varint_field(1, 1) + _field(3, b"25%")
    pdb_spec = _field(1, int_or_string)
    pdb = decode_protobuf(_envelope("policy/v1", "PodDisruptionBudget", _field(2, pdb_spec)))
    assert pdb["spec"] == {"minAvailable": "25%"}

    when = _varint_field(1, 981173106)  # 2001-02-03T04:05:06Z
    event = _field(6, when) + _field(10, when + _varint_field(2, 123_456_000))
    decoded = decode_protobuf(_envelope("v1", "Event", event))
    assert decoded["firstTimestamp"] == "2001-02-03T04:05:06Z"
    assert decoded["eventTime"] == "2001-02-03T04:05:06.123456Z"


def test_a_field_with_the_wrong_wire_type_is_unsupported() -> None:
    spec = _field(1, b"three")  # DeploymentSpec.replicas is a varint
    with pytest.raises(UnsupportedProtobuf, match="replicas"):
        decode_protobuf(_envelope("apps/v1", "Deployment", _field(2, spec)))


def test_go_durations() -> None:
    from kcm.apiserver._protobuf import _go_duration

    assert _go_duration(0) == "0s"
    assert _go_duration(3_723_500_000_000) == "1h2m3.5s"
    assert _go_duration(150_000_000) == "150ms"
    assert _go_duration(-90_000_000_000) == "-1m30s"


def test_a_self_subject_access_review() -> None:
    attributes = _field(1, b"ns") + _field(2, b"create") + _field(5, b"pods")
    obj = decode_protobuf(
        _envelope(
            "authorization.k8s.io/v1", "SelfSubjectAccessReview", _field(2, _field(1, attributes))
        )
    )
    assert obj["spec"] == {
        "resourceAttributes": {"namespace": "ns", "verb": "create", "resource": "pods"}
    }


def test_negative_numbers_and_plain_zero_fields() -> None:
    """A plain (non-omitempty) int keeps its zero; int32s arrive sign-extended."""
    spec = _varint_field(2, 0) + _varint_field(3, 0)  # hostPort 0 (omitempty), containerPort 0
    container = _field(1, b"c") + _field(6, spec)
    pod_spec = _field(2, container) + _varint_field(4, -5)  # terminationGracePeriodSeconds
    obj = decode_protobuf(_envelope("v1", "Pod", _field(2, pod_spec)))
    assert obj["spec"]["containers"] == [{"name": "c", "ports": [{"containerPort": 0}]}]
    assert obj["spec"]["terminationGracePeriodSeconds"] == -5
