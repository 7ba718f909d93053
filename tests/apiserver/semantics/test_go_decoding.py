"""Request bodies of built-in kinds decoded as kube-apiserver decodes them: Go's syntax and
type errors, times, quantities, base64, YAML 1.1 and the 400 wording (cases checked against a
real kube-apiserver 1.24)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kcm.apiserver._body import decode_object
from kcm.apiserver._go_json import syntax_error
from kcm.apiserver._go_quantity import QuantityError, canonical_quantity
from kcm.apiserver._go_time import RFC3339, RFC3339_MICRO, TimeParseError, format_time, parse_time
from kcm.apiserver._go_yaml import YamlError, parse_yaml
from kcm.apiserver._registry import Registry
from kcm.apiserver._status import StatusError

CONFIGMAPS = Registry().lookup("", "v1", "configmaps")
PODS = Registry().lookup("", "v1", "pods")
UNRECOGNIZED = "the object provided is unrecognized (must be of type ConfigMap): "


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "unexpected end of JSON input"),
        (b'{"a": {"b": 1}', "unexpected end of JSON input"),
        (b'{"a" 1}', "invalid character '1' after object key"),
        (b'{"a":1 "b"}', "invalid character '\"' after object key:value pair"),
        (b"[1 2]", "invalid character '2' after array element"),
        (b"trux", "invalid character 'x' in literal true (expecting 'e')"),
        (b'{"a":1,}', "invalid character '}' looking for beginning of object key string"),
        (b"01", "invalid character '1' after top-level value"),
        (b'"a\x01"', "invalid character '\\x01' in string literal"),
        (b"\xef\xbb\xbf{}", "invalid character 'ï' looking for beginning of value"),
        (b"NaN", "invalid character 'N' looking for beginning of value"),
        (b"[]", ""),
    ],
)
def test_json_syntax_errors_are_gos(body: bytes, message: str) -> None:
    assert syntax_error(body) == message


def _decode(body: Any, content_type: str = "application/json", res: Any = CONFIGMAPS) -> Any:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return decode_object(res, raw, content_type)


def _bad_request(body: Any, content_type: str = "application/json", res: Any = CONFIGMAPS) -> str:
    with pytest.raises(StatusError) as caught:
        _decode(body, content_type, res)
    assert caught.value.code == 400
    return caught.value.message


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (
            b"[1 2]",
            "couldn't get version/kind; json parse error: invalid character '2' after "
            "array element (5b3120325d)",
        ),
        (
            b'{"apiVersion": 1}',
            "couldn't get version/kind; json parse error: json: cannot "
            'unmarshal number into Go struct field .apiVersion of type string ({"apiVersion": 1})',
        ),
        (
            b'{"apiVersion":"a/b/c","kind":"ConfigMap"}',
            'unexpected GroupVersion string: a/b/c ({"apiVersion":"a/b/c","kind":" ...)',
        ),
    ],
)
def test_unreadable_bodies(body: bytes, why: str) -> None:
    assert _bad_request(body) == UNRECOGNIZED + why


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (
            {"metadata": {"name": "a", "creationTimestamp": 5}},
            "json: cannot unmarshal number into Go struct field "
            "ObjectMeta.metadata.creationTimestamp of type string",
        ),
        (
            {"metadata": {"name": "a", "finalizers": [1]}},
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.finalizers "
            "of type string",
        ),
        (
            {"metadata": {"name": "a", "ownerReferences": {}}},
            "json: cannot unmarshal object into Go struct field "
            "ObjectMeta.metadata.ownerReferences of type []v1.OwnerReference",
        ),
        ({"binaryData": {"k": "dg=x"}}, "illegal base64 data at input byte 2"),
        ({"binaryData": {"k": "dg"}}, "illegal base64 data at input byte 0"),
    ],
)
def test_type_errors_name_the_go_struct_and_field(body: Any, error: str) -> None:
    expected = f'ConfigMap in version "v1" cannot be handled as a ConfigMap: {error}'
    assert _bad_request(body) == expected


def test_duplicate_keys_merge_maps_and_null_unsets() -> None:
    merged = _decode(b'{"metadata":{"name":"a"},"data":{"a":"b"},"data":{"c":"d"}}')
    assert merged["data"] == {"a": "b", "c": "d"}
    unset = _decode(b'{"metadata":{"name":"a"},"data":{"a":"b"},"data":null}')
    assert "data" not in unset


def test_a_null_body_and_an_empty_yaml_body_are_empty_objects() -> None:
    assert _decode(b"null") == {"apiVersion": "v1", "kind": "ConfigMap"}
    assert _decode(b"", "application/yaml") == {"apiVersion": "v1", "kind": "ConfigMap"}


def test_media_types() -> None:
    assert _decode(b'{"metadata":{"name":"a"}}', "application/json; charset=utf-8")
    with pytest.raises(StatusError) as caught:
        _decode(b'{"metadata":{"name":"a"}}', "text/json")
    assert caught.value.code == 415
    assert caught.value.message == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml, application/vnd.kubernetes.protobuf"
    )


def test_yaml_is_yaml_1_1_as_yaml_v2_reads_it() -> None:
    body = b'data:\n  y: "1"\n  on: "2"\n  0x10: "3"\n  t: 2001-02-03\n  c: 12:30\n'
    assert parse_yaml(body) == {"data": {"true": "2", "16": "3", "t": "2001-02-03", "c": "12:30"}}
    with pytest.raises(YamlError, match=r"^yaml: line 1: did not find expected ',' or '\]'$"):
        parse_yaml(b"a: [b\n")


def test_resource_lists_are_canonical_and_rounded_up_to_milli() -> None:
    def limits(value: Any) -> Any:
        pod = {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": value}}}]}}
        return _decode(pod, res=PODS)["spec"]["containers"][0]["resources"]["limits"]["cpu"]

    assert [limits(v) for v in ("+1", "1.G", None, "e3", "0.0000000001", "1.5e3", 3)] == [
        "+1",
        "1.G",
        "0",
        "0",
        "1m",
        "1500",
        "3",
    ]


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("2000m", "2"),
        ("0.5Gi", "512Mi"),
        ("1e3", "1e3"),
        ("1.5Ki", "1536"),
        ("1000M", "1G"),
        ("2048Ki", "2Mi"),
        ("0.5Ki", "512"),
        ("12e6", "12e6"),
        ("2147483648", "2147483648"),
    ],
)
def test_quantities_are_written_in_canonical_form(text: str, canonical: str) -> None:
    assert canonical_quantity(text) == canonical


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("abc", "quantities must match the regular expression"),
        ("1Mx", "quantities must match the regular expression"),
        ("1e", "unable to parse quantity's suffix"),
    ],
)
def test_bad_quantities(text: str, message: str) -> None:
    with pytest.raises(QuantityError, match=message):
        canonical_quantity(text)


@pytest.mark.parametrize(
    ("value", "layout", "result"),
    [
        ("2001-02-03T06:05:06.500000+02:00", RFC3339_MICRO, "2001-02-03T04:05:06.500000Z"),
        ("2001-02-03T04:05:06.789Z", RFC3339, "2001-02-03T04:05:06Z"),
        ("2001-02-03T4:05:06.000000Z", RFC3339_MICRO, "2001-02-03T04:05:06.000000Z"),
        ("2001-02-03T04:05:06Z", RFC3339_MICRO, 'cannot parse "Z" as ".000000"'),
        ("2001-02-03T04:05:06.123456789Z", RFC3339_MICRO, 'cannot parse "789Z" as "Z07:00"'),
        ("2001-02-03", RFC3339, 'cannot parse "" as "T"'),
        ("2001-13-03T06:05:06Z", RFC3339, ": month out of range"),
        ("2001-02-30T06:05:06Z", RFC3339, ": day out of range"),
        ("2001-02-03T06:05:06Zx", RFC3339, ': extra text: "x"'),
    ],
)
def test_times_parse_as_go_parses_them(value: str, layout: str, result: str) -> None:
    if result.startswith("2001"):
        assert format_time(parse_time(value, layout), layout) == result
        return
    with pytest.raises(TimeParseError) as caught:
        parse_time(value, layout)
    assert str(caught.value).startswith(f'parsing time "{value}"')
    assert str(caught.value).endswith(result)


def test_false_in_an_omitempty_bool_is_not_kept() -> None:
    """``spec.paused: false`` and a pod's ``hostNetwork: false`` are not written back by Go
    (plain ``bool``, ``omitempty``); ``true`` is, and a ``*bool`` keeps its ``false``."""
    deployments = Registry().lookup("apps", "v1", "deployments")
    spec = {"paused": False, "replicas": 1}
    assert _decode({"spec": spec}, res=deployments)["spec"] == {"replicas": 1}
    paused = _decode({"spec": {"paused": True}}, res=deployments)
    assert paused["spec"] == {"paused": True}
    pod = {"spec": {"hostNetwork": False, "automountServiceAccountToken": False}}
    assert _decode(pod, res=PODS)["spec"] == {"automountServiceAccountToken": False}
